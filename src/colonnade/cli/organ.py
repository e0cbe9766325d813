"""`colonnade organ serve MODULE`: one organ as its own MCP server over stdio (the sidecar mode).

The organ runs in this process only; an MCP client (or a gateway in front) starts the command
and speaks MCP on its stdin/stdout. Logs go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Annotated

import typer

from colonnade.cli.common import fail
from colonnade.organs.loading import add_import_paths, import_organ
from colonnade.organs.organ_errors import OrganLoadError

__all__ = ["cli", "organ_app", "serve"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""

organ_app = typer.Typer(help="Run an organ on its own (sidecar mode).", no_args_is_help=True)
cli.add_typer(organ_app, name="organ")


@organ_app.command("serve")
def serve(
    module: Annotated[
        str,
        typer.Argument(
            help="The organ: MODULE (its `organ` object) or MODULE:ATTRIBUTE.", show_default=False
        ),
    ],
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir", help="Folder the organ keeps its state in (default: .colonnade/organs/NAME)."
        ),
    ] = None,
    import_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--import-path", "-I", help="Folder to import the module from (repeatable).", show_default=False
        ),
    ] = None,
) -> None:
    """Serve one organ as an MCP server over stdio: each operation of its card is a tool.

    The organ's state goes into DATA_DIR/NAME (one folder per organ). Stop by closing stdin.
    Example (as an MCP client's server command):
    colonnade organ serve examples.organs.vault -I /path/to/colonnade --data-dir /path/to/state
    """
    logging.basicConfig(level=logging.WARNING)  # stderr: stdout is the protocol
    add_import_paths([*(import_path or []), Path.cwd()])
    try:
        organ, _ = import_organ(module)
    except OrganLoadError as exc:
        fail(str(exc))
    modes = organ.describe().execution_modes
    if "sidecar" not in modes:
        fail(f"the organ runs only as {', '.join(modes)} (its card's execution_modes), not as a sidecar")
    from colonnade.organs.sidecar import serve_stdio

    folder = data_dir if data_dir is not None else Path(".colonnade") / "organs"
    asyncio.run(serve_stdio(organ, data_dir=folder.resolve()))
