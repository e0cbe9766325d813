"""Shared CLI plumbing: consoles, settings loading, and clean failure messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from colonnade.config import ConfigError, Settings, load_settings

__all__ = [
    "DEMO_TOKEN_FILE",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_USAGE",
    "State",
    "TokenOption",
    "client_token",
    "console",
    "err_console",
    "fail",
    "settings_of",
]

DEMO_TOKEN_FILE = "demo-token"
"""Under data_dir: the admin token `colonnade demo` mints for the client commands."""
TokenOption = Annotated[
    str | None,
    typer.Option(
        envvar="COLONNADE_TOKEN",
        help="Bearer credential (default: data_dir/demo-token, which `colonnade demo` writes).",
        show_default=False,
    ),
]
"""The credential option of every client command."""

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


@dataclass
class State:
    config_path: Path | None = None
    _settings: Settings | None = field(default=None, repr=False)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    err_console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(code)


def settings_of(ctx: typer.Context) -> Settings:
    """Load settings once per invocation; a bad config ends the command with one line per problem."""
    state = ctx.find_object(State) or State()
    if state._settings is None:
        try:
            state._settings = load_settings(state.config_path)
        except ConfigError as exc:
            for problem in exc.problems:
                err_console.print(f"[red]config error:[/red] {problem}", soft_wrap=True)
            raise typer.Exit(EXIT_USAGE) from None
    return state._settings


def client_token(given: str | None, settings: Settings) -> str | None:
    """The credential of a client command: --token / COLONNADE_TOKEN, else the demo's token file."""
    if given:
        return given.strip()
    path = settings.data_dir / DEMO_TOKEN_FILE
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
