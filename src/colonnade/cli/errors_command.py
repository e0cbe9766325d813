"""`colonnade errors`: the error taxonomy every call result draws its codes from.

A table for people at the terminal, the Markdown reference (`--markdown`) for docs, and
`-o docs/errors.md` to regenerate the checked-in copy (what `make schemas` runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from colonnade.calls.call_errors import REGISTRY
from colonnade.calls.envelope import CallStatus
from colonnade.calls.errors_doc import grouped, render_markdown
from colonnade.cli.common import console, err_console, fail

__all__ = ["cli", "errors_command"]

_STATUS_STYLE = {
    CallStatus.INVALID_REQUEST: "yellow",
    CallStatus.TERMINAL_ERROR: "red",
    CallStatus.RETRYABLE_ERROR: "cyan",
}


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command("errors")
def errors_command(
    markdown: Annotated[
        bool,
        typer.Option("--markdown", help="Print the Markdown reference (docs/errors.md) instead of a table."),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the Markdown reference to this file (e.g. docs/errors.md)."
        ),
    ] = None,
) -> None:
    """List every error code a call can end with: its class, outcome status, meaning and fix hint.

    Example: colonnade errors -o docs/errors.md   (regenerates the reference)
    """
    if output is not None:
        _write(output)
    elif markdown:
        typer.echo(render_markdown(), nl=False)
    else:
        console.print(_table(), soft_wrap=False)


def _write(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_markdown(), encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    err_console.print(f"wrote {path} ({len(REGISTRY)} codes)", soft_wrap=True)


def _table() -> Table:
    table = Table(title="Colonnade error codes", title_justify="left", show_lines=False)
    table.add_column("code", style="bold", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("meaning")
    table.add_column("fix", style="dim")
    for error_class, specs in grouped(REGISTRY.values()):
        table.add_section()
        heading = "bold magenta"
        table.add_row(Text(error_class.prefix, heading), "", Text(error_class.name, heading), "")
        for spec in specs:
            status = Text(spec.status.value, style=_STATUS_STYLE.get(spec.status, ""))
            table.add_row(spec.code, status, spec.title, spec.fix)
    return table
