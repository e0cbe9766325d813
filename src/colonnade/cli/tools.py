"""`colonnade tools search`: ask the gateway's router which tools fit a request, and why (the running
gateway's when one answers, else over the configured contracts); `colonnade tools list`: what a
running gateway serves to you (your credential decides)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

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
from colonnade.config import Settings

__all__ = ["SEARCH_PATH", "cli", "list_tools", "search"]


cli = typer.Typer()
"""What this module adds to its parent group; `colonnade.cli.root` lists it and loads it on first use."""


SEARCH_PATH = "/v1/search"
"""The gateway's search route (`colonnade.surfaces.rest.tool_search`), named here so that asking
a gateway imports no gateway code."""
_URL_HELP = "Base URL of the running gateway (default: http://<server.host>:<server.port>)."


@cli.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the agent wants to do, in plain words.")],
    k: Annotated[int, typer.Option("--k", min=1, max=200, help="How many tools to show.")] = 10,
    domain: Annotated[
        list[str] | None,
        typer.Option("--domain", help="Domain hint (an API name or tag) to favour; repeatable."),
    ] = None,
    url: Annotated[str | None, typer.Option(help=_URL_HELP)] = None,
    token: TokenOption = None,
    local: Annotated[
        bool, typer.Option("--local", help="Rank the configured contracts here, without asking a gateway.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the routing decision as JSON.")] = False,
) -> None:
    """Rank the catalog's tools for QUERY with the gateway's router: scores, reasons, confidence.

    Asks the running gateway (what it serves to your credential, federated servers' tools
    included); when none answers, ranks the configured contracts and store here, and says which
    it did. Example: colonnade tools search "refund the last invoice of a customer" --k 5
    """
    if not query.strip():
        fail("the query is empty; describe what the tool should do")
    settings = settings_of(ctx)
    base = (url or settings.server.base_url).rstrip("/")
    ranking = None if local else _ask_gateway(base, client_token(token, settings), query, k, domain or [])
    if ranking is not None:
        ranked_by = f"the gateway at {base}: the tools it serves to this credential"
    else:
        why = "--local" if local else f"no gateway answers at {base}"
        ranked_by = (
            f"this command, over the configured contracts and store ({why}; no federated servers' tools)"
        )
        ranking = asyncio.run(_rank_locally(settings, query, k, domain or []))
    if as_json:
        console.print_json(json.dumps({**ranking, "ranked_by": ranked_by}))
        return
    _render(ranking, ranked_by)


def _ask_gateway(
    base: str, credential: str | None, query: str, k: int, domain: list[str]
) -> dict[str, Any] | None:
    """The gateway's ranking, or None when nothing answers at `base` (or an older gateway lacks the route)."""
    import httpx2

    headers = {"Authorization": f"Bearer {credential}"} if credential else {}
    params: dict[str, str | int | list[str]] = {"query": query, "k": k, "domain": list(domain)}
    try:
        with httpx2.Client(headers=headers, timeout=httpx2.Timeout(30.0, connect=2.0)) as client:
            response = client.get(base + SEARCH_PATH, params=params)
    except httpx2.TransportError:
        return None
    if response.status_code == 404:
        return None
    body = _json_or_none(response)
    if response.status_code != 200 or not isinstance(body, dict):
        error = body.get("error", {}) if isinstance(body, dict) else {}
        fail(
            f"the gateway at {base} refused the search: {error.get('code', response.status_code)}: "
            f"{error.get('message', response.text[:200])} (or rank the configured contracts here: --local)"
        )
    return body


def _json_or_none(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


async def _rank_locally(settings: Settings, query: str, k: int, domain: list[str]) -> dict[str, Any]:
    from colonnade.cli._launch import open_gateway
    from colonnade.surfaces.rest.tool_search import search_payload

    async with open_gateway(settings) as gateway:
        if not len(gateway.catalog):
            fail(
                "the catalog is empty: publish contracts first (colonnade contract publish FILE) "
                "or list them under `contracts:` in colonnade.yaml" + demo_store_hint(settings)
            )
        decision = gateway.router.route(query, domain_hints=domain, k=k)
        return search_payload(decision, gateway.catalog)


def _render(ranking: dict[str, Any], ranked_by: str) -> None:
    table = Table(title=f"Tools for: {ranking['query_used']}", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("tool (wire name)", overflow="fold")
    table.add_column("canonical name", overflow="fold")
    table.add_column("score", justify="right")
    table.add_column("why", overflow="fold")
    for rank, tool in enumerate(ranking["tools"], start=1):
        table.add_row(
            str(rank),
            str(tool["wire_name"]),
            str(tool["canonical_name"]),
            f"{tool['score']:.3f}",
            "\n".join(tool["reasons"]),
        )
    console.print(table)
    console.print(f"confidence {ranking['confidence']:.2f}{_confidence_note(ranking)}", soft_wrap=True)
    if not ranking["tools"]:
        console.print("no tool matches; try other words: what the tool does, or the name of its API")
    console.print(f"ranked by {ranked_by}", soft_wrap=True, style="dim")


def _confidence_note(ranking: dict[str, Any]) -> str:
    if ranking.get("fallback_used"):
        return " [yellow](low confidence: the configured fallback tools are shown)[/yellow]"
    note = ranking.get("confidence_note")
    return f" [yellow]({note})[/yellow]" if note else ""


@cli.command("list")
def list_tools(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(help=_URL_HELP),
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
