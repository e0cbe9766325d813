"""Root Typer app: global options (--config, --version) and the command groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from colonnade import __version__
from colonnade.cli.common import State, err_console

__all__ = ["app", "contract_app", "main"]

app = typer.Typer(
    name="colonnade",
    help="Colonnade: turn API contracts and MCP servers into governed, agent-ready tools.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
contract_app = typer.Typer(
    help="Validate, import, export and publish API contracts (UAC).", no_args_is_help=True
)
app.add_typer(contract_app, name="contract")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"colonnade {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", envvar="COLONNADE_CONFIG", help="Path to colonnade.yaml."),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Colonnade command line."""
    ctx.obj = State(config_path=config)


def main() -> None:
    """Console-script entry point: never lets a traceback reach the user for expected errors."""
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/yellow]")
        raise SystemExit(130) from None
