"""`colonnade tools describe NAME`: one tool's definition, by canonical, wire or bare tool name.

People know a tool by the `llm.tool_name` they wrote in the contract (`get_invoice`); the command
takes that as well as the canonical and wire names, with the same rule as calls: a bare name must
be unique among the tools the configured local principal may call. An ambiguous name lists the
candidates, an unknown one suggests close names; both exit 2.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer

from colonnade.cli.common import OutputFormat, console, demo_store_hint, fail, print_json, settings_of
from colonnade.config import Settings

__all__ = ["cli", "describe"]


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


@cli.command()
def describe(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Canonical (acme:billing:get_invoice), wire or bare name.")],
    output: Annotated[
        OutputFormat,
        typer.Option("--format", "-f", help="text for people; json for tools.", case_sensitive=False),
    ] = OutputFormat.TEXT,
) -> None:
    """Show the tool NAME as the gateway serves it: names, version, side effects, schemas.

    Uses the configured store and contracts (as `colonnade serve` would). Example:
    colonnade tools describe get_invoice --format json
    """
    detail = asyncio.run(_describe(settings_of(ctx), name))
    if output is OutputFormat.JSON:
        print_json(detail)
        return
    _render(detail)


async def _describe(settings: Settings, name: str) -> dict[str, Any]:
    from colonnade.cli._launch import open_gateway
    from colonnade.governance.tool_lookup import AmbiguousName, find_tool, near_names
    from colonnade.surfaces.rest.views import tool_detail

    async with open_gateway(settings) as gateway:
        catalog, authorizer, principal = gateway.catalog, gateway.authorizer, gateway.local_principal
        found = find_tool(catalog, name, authorizer, principal)
        if isinstance(found, AmbiguousName):
            names = "\n".join(f"  {t.canonical_name}  ({t.wire_name})" for t in found.candidates)
            fail(f"{found.message}:\n{names}")
        if found is None:
            near = near_names(catalog, name, authorizer, principal)
            hint = f"; did you mean {' or '.join(near)}?" if near else " (colonnade tools search finds tools)"
            fail(f"no tool named {name!r}{hint}{demo_store_hint(settings) if not len(catalog) else ''}")
        return tool_detail(found)


def _render(detail: dict[str, Any]) -> None:
    llm = detail.get("llm") or {}
    rows = [
        ("canonical name", detail["canonical_name"]),
        ("wire name", detail["wire_name"]),
        ("tool name", llm.get("tool_name", "")),
        ("version", detail["version"]),
        ("side effects", detail["side_effects"]),
        ("determinism", detail["determinism"]),
        ("needs approval", str(detail["requires_human_approval"]).lower()),
        ("summary", detail["summary"]),
    ]
    for label, value in rows:
        console.print(f"[bold]{label}:[/bold] {value}", soft_wrap=True)
    arguments = detail["input_schema"].get("properties", {})
    required = set(detail["input_schema"].get("required", []))
    listed = ", ".join(f"{n}{'*' if n in required else ''}" for n in arguments) or "none"
    console.print(f"[bold]arguments:[/bold] {listed}", soft_wrap=True)
