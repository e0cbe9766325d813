"""Shared CLI plumbing: consoles, output formats, settings loading, and clean failure messages.

The consoles never turn `:name:` into an emoji: canonical tool names (`acme:b:c`) are printed as given.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console, ConsoleDimensions

from colonnade.cli.state import State

if TYPE_CHECKING:  # loaded by `settings_of`, so a command that reads no settings never imports them
    from colonnade.config import Settings

__all__ = [
    "DEMO_ADDRESS_FILE",
    "DEMO_DIR",
    "DEMO_TOKEN_FILE",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_USAGE",
    "UNCUT_WIDTH",
    "DemoAddress",
    "OutputFormat",
    "State",
    "TokenOption",
    "client_token",
    "console",
    "demo_store_hint",
    "err_console",
    "fail",
    "gateway_base_url",
    "print_json",
    "running_demo",
    "settings_of",
    "store_settings",
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

UNCUT_WIDTH = 10_000
"""Line width off a terminal: wide enough that no table cell (a tool name above all) is ever cut."""


class OutputFormat(StrEnum):
    """`--format` of the commands that print a report: text for people, JSON for tools and CI."""

    TEXT = "text"
    JSON = "json"


class _Console(Console):
    """A terminal's width on a terminal; off one (a file, a pipe, `| grep`) lines are never cut.

    Rich otherwise falls back to 80 columns (or the width of whichever standard stream is a
    terminal), and tables cut what does not fit: `acme:billing:create…` in a log file.
    """

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        return size if self.is_terminal else ConsoleDimensions(UNCUT_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


console: Console = _Console(highlight=False, emoji=False)
err_console: Console = _Console(stderr=True, highlight=False, emoji=False)


def print_json(data: object, *, err: bool = False) -> None:
    """One JSON document, plain text, on stdout (stderr with `err`): what `--format json` prints."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False), err=err)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    err_console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(code)


def settings_of(ctx: typer.Context) -> Settings:
    """Load settings once per invocation; a bad config ends the command with one line per problem."""
    from colonnade.config import ConfigError, load_settings

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


DEMO_DIR = "demo"
"""Under data_dir: the folder `colonnade demo` keeps its store and records in."""


DEMO_ADDRESS_FILE = "demo.json"
"""Under data_dir, beside the tokens: where the running demo listens and keeps its store."""


@dataclass(frozen=True)
class DemoAddress:
    """What `colonnade demo` writes at start-up, so commands run in the project folder follow it."""

    base_url: str
    data_dir: Path
    pid: int

    def write(self, folder: Path) -> Path:
        path = folder / DEMO_ADDRESS_FILE
        document = {"base_url": self.base_url, "data_dir": str(self.data_dir), "pid": self.pid}
        path.write_text(json.dumps(document) + "\n", encoding="utf-8")
        return path


def running_demo(settings: Settings) -> DemoAddress | None:
    """The demo that wrote data_dir/demo.json, while its process lives (a stale file is ignored)."""
    try:
        document = json.loads((settings.data_dir / DEMO_ADDRESS_FILE).read_text(encoding="utf-8"))
        address = DemoAddress(str(document["base_url"]), Path(document["data_dir"]), int(document["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return address if _alive(address.pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _address_is_configured(settings: Settings) -> bool:
    return bool({"host", "port"} & settings.server.model_fields_set)


def gateway_base_url(settings: Settings) -> str:
    """Where the client commands find the gateway: the configured address when one is set, else the
    running demo's (`make run PORT=9765`), else the default."""
    demo = None if _address_is_configured(settings) else running_demo(settings)
    return demo.base_url if demo is not None else settings.server.base_url


def _demo_store(settings: Settings) -> Path | None:
    """The running demo's folder, when this command should open it instead of data_dir's own store.

    Only while the demo runs: a key made or a contract published in a stopped demo's store would be
    lost on its next run (it starts afresh) and unknown to `colonnade serve`; the hint says where it is.
    """
    if settings.database_url is not None:
        return None
    demo = running_demo(settings)
    return demo.data_dir if demo is not None else None


def store_settings(settings: Settings) -> Settings:
    """The settings an operator command (keys, agents, approvals, audit, contract) opens its store
    with: the running demo's folder when there is one here, said on stderr."""
    folder = _demo_store(settings)
    if folder is None:
        return settings
    err_console.print(
        f"[dim]the demo's store: {folder} (set COLONNADE_DATA_DIR or database_url to use another)[/dim]",
        soft_wrap=True,
    )
    return settings.model_copy(update={"data_dir": folder})


def demo_store_hint(settings: Settings) -> str:
    """Where the demo's store is, when this command read another one and `make run` left one there."""
    demo = settings.data_dir / DEMO_DIR
    if settings.database_url is not None or not (demo / "colonnade.db").is_file():
        return ""
    if _demo_store(settings) is not None:
        return ""  # this command read the demo's store already
    return f"; the demo (make run) keeps its own store: run this with COLONNADE_DATA_DIR={demo}"
