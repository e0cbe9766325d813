"""`colonnade tools search`: ask the gateway's router which tools fit a request, and why;
`colonnade tools list`: what a running gateway serves to you (your credential decides)."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from colonnade.cli.common import (
    TokenOption,
    client_token,
    console,
    demo_store_hint,
    fail,
    gateway_base_url,
    settings_of,
)
from colonnade.cli.root import app
from colonnade.config import Settings

if TYPE_CHECKING:  # the router is imported by the command only, to keep `colonnade --help` fast
    from colonnade.routing.router import RoutingDecision

__all__ = ["list_tools", "search", "tools_app"]

tools_app = typer.Typer(help="Find and inspect the tools the gateway serves.", no_args_is_help=True)
app.add_typer(tools_app, name="tools")


@tools_app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the agent wants to do, in plain words.")],
    k: Annotated[int, typer.Option("--k", min=1, max=200, help="How many tools to show.")] = 10,
    domain: Annotated[
        list[str] | None,
        typer.Option("--domain", help="Domain hint (an API name or tag) to favour; repeatable."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the routing decision as JSON.")] = False,
) -> None:
    """Rank the catalog's tools for QUERY with the gateway's router: scores, reasons, confidence.

    Uses the configured store and contracts (as `colonnade serve` would). Example:
    colonnade tools search "refund the last invoice of a customer" --k 5
    """
    if not query.strip():
        fail("the query is empty; describe what the tool should do")
    settings = settings_of(ctx)
    decision, wire_names = asyncio.run(_route(settings, query, k, domain or []))
    if as_json:
        console.print_json(json.dumps(decision.to_json()))
        return
    _render(decision, wire_names)


async def _route(
    settings: Settings, query: str, k: int, domain: list[str]
) -> tuple[RoutingDecision, dict[str, str]]:
    from colonnade.cli._launch import open_gateway

    async with open_gateway(settings) as gateway:
        if not len(gateway.catalog):
            fail(
                "the catalog is empty: publish contracts first (colonnade contract publish FILE) "
                "or list them under `contracts:` in colonnade.yaml" + demo_store_hint(settings)
            )
        decision = gateway.router.route(query, domain_hints=domain, k=k)
        wire_names = {t.canonical_name: t.wire_name for t in gateway.catalog.tools()}
        return decision, wire_names


def _render(decision: RoutingDecision, wire_names: dict[str, str]) -> None:
    table = Table(title=f"Tools for: {decision.query_used}", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("tool (wire name)", overflow="fold")
    table.add_column("canonical name", overflow="fold")
    table.add_column("score", justify="right")
    table.add_column("why", overflow="fold")
    for rank, tool_id in enumerate(decision.selected, start=1):
        table.add_row(
            str(rank),
            wire_names.get(tool_id, tool_id),
            tool_id,
            f"{decision.scores.get(tool_id, 0.0):.3f}",
            "\n".join(decision.reasons.get(tool_id, [])),
        )
    console.print(table)
    note = " [yellow](low confidence: the configured fallback tools are shown)[/yellow]"
    console.print(f"confidence {decision.confidence:.2f}{note if decision.fallback_used else ''}")
    if not decision.selected:
        console.print("no tool matches; try other words: what the tool does, or the name of its API")


@tools_app.command("list")
def list_tools(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(help="Base URL of the running gateway (default: http://<server.host>:<server.port>)."),
    ] = None,
    token: TokenOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tools as JSON.")] = False,
) -> None:
    """List the tools a running gateway serves to you, over its REST API (every page).

    Only the tools your credential may see are listed. Example: COLONNADE_TOKEN=... colonnade tools list
    """
    import httpx2

    settings = settings_of(ctx)
    url = url or gateway_base_url(settings)
    credential = client_token(token, settings)
    headers = {"Authorization": f"Bearer {credential}"} if credential else {}
    tools: list[dict[str, object]] = []
    cursor = ""
    try:
        with httpx2.Client(base_url=url.rstrip("/"), headers=headers, timeout=30.0) as client:
            while True:
                response = client.get("/v1/tools", params={"cursor": cursor} if cursor else {})
                if response.status_code != 200:
                    error = response.json().get("error", {}) if response.content else {}
                    fail(f"{error.get('code', response.status_code)}: {error.get('message', response.text)}")
                page = response.json()
                tools += page["tools"]
                cursor = page.get("next_cursor") or ""
                if not cursor:
                    break
    except httpx2.HTTPError as exc:
        fail(f"cannot reach the gateway at {url}: {type(exc).__name__} (is `colonnade serve` running there?)")
    if as_json:
        console.print_json(json.dumps(tools))
        return
    table = Table("tool (wire name)", "canonical name", "side effects", "version")
    for tool in tools:
        table.add_row(
            str(tool["wire_name"]),
            str(tool["canonical_name"]),
            str(tool["side_effects"]),
            str(tool["version"]),
        )
    console.print(table)
    console.print(f"{len(tools)} tools")
