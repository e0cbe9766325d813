"""`colonnade tools schemas --out DIR`: per-tool request and response JSON Schemas as files.

For each tool the configured local principal may see, `<wire>.request.schema.json` (the call
envelope with this tool's name and input schema) and `<wire>.response.schema.json` (the result of
the chosen envelope version with this tool's output schema), so a client can validate what it
sends and receives for each tool without running Colonnade.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from colonnade.cli.common import console, demo_store_hint, err_console, fail, settings_of
from colonnade.config import Settings

__all__ = ["cli", "schemas"]

cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command()
def schemas(
    ctx: typer.Context,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Folder to write the schema files into (created if missing)."),
    ],
    envelope_version: Annotated[
        int,
        typer.Option(
            "--envelope-version",
            min=1,
            max=2,
            help="Envelope version of the response schemas: 1 (what REST answers by default) or 2.",
        ),
    ] = 1,
) -> None:
    """Write each tool's request and response JSON Schemas (draft 2020-12) into a folder.

    Two files per tool: WIRE.request.schema.json and WIRE.response.schema.json. Uses the configured
    store and contracts (as `colonnade serve` would). Example:
    colonnade tools schemas --out schemas/tools
    """
    if out.exists() and not out.is_dir():
        fail(f"--out {out} is a file, not a folder: give a folder to write the schema files into")
    version = 1 if envelope_version == 1 else 2
    settings = settings_of(ctx)
    count = asyncio.run(_write(settings, out, version))
    if count == 0:
        fail(f"no tools to describe: the catalog is empty{demo_store_hint(settings)}")
    console.print(f"wrote the request and response schemas of {count} tool(s) to {out}", soft_wrap=True)


async def _write(settings: Settings, out: Path, version: int) -> int:
    from colonnade.calls.envelope_tool_schemas import write_tool_schemas
    from colonnade.cli._launch import open_gateway
    from colonnade.governance.authorization import permits

    async with open_gateway(settings) as gateway:
        allowed = gateway.authorizer.visible(gateway.local_principal)
        tools = [tool for tool in gateway.catalog.tools() if permits(allowed, tool.canonical_name)]
    if not tools:
        return 0
    columns = (
        TextColumn("writing schemas"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=err_console, transient=True, disable=len(tools) < 20) as progress:
        task = progress.add_task("", total=len(tools))
        try:
            write_tool_schemas(
                tools,
                out,
                1 if version == 1 else 2,
                on_written=lambda files: progress.update(task, advance=1, description=files.canonical_name),
            )
        except OSError as exc:
            fail(f"cannot write the schema files into {out}: {exc.strerror or exc}")
    return len(tools)
