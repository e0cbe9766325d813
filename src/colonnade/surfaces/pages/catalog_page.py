"""`/ui/catalog`: every tool grouped by API, or ranked by the gateway's router for `?q=`.

`?api=tenant:api` narrows either view to one API; a search then ranks only that API's tools.
The ranking is the router's own (what `search_tools` and `colonnade tools search` show), with
its score and reasons per tool, so the page explains routing as well as listing tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.routing.router import Router, RoutingDecision
from colonnade.surfaces.pages.badges import governance_badges, side_effects_badge
from colonnade.surfaces.pages.html import Html, join, separated, tag
from colonnade.surfaces.pages.layout import CATALOG_PATH, Visitor, document
from colonnade.surfaces.pages.links import api_url, tool_link

__all__ = ["MAX_RESULTS", "Visible", "api_of", "catalog_page"]

MAX_RESULTS = 50
Visible = Callable[[Tool], bool]
"""Whether the visitor may see a tool (the gateway's authorizer decides)."""


def api_of(tool: Tool) -> str:
    """The `tenant:api` an `?api=` filter names."""
    return f"{tool.tenant}:{tool.api}"


def catalog_page(
    catalog: Catalog,
    router: Router,
    *,
    query: str = "",
    api: str = "",
    visible: Visible | None = None,
    visitor: Visitor | None = None,
) -> tuple[Html, int]:
    """The page and its HTTP status (404 when `api` names no API the visitor may see)."""
    tools = [tool for tool in catalog.tools() if visible is None or visible(tool)]
    apis = sorted({api_of(tool) for tool in tools})
    query = query.strip()
    api = api.strip()
    heading = tag("h1", "Catalog")
    totals = tag("p", f"{len(tools)} tools in {len(apis)} APIs", id="totals", class_="muted")
    form = _search_form(query, api, apis)
    if api and api not in apis:
        missing = tag(
            "p",
            f"No API named {api!r} in the catalog. APIs: ",
            separated(tag("a", name, href=api_url(name)) for name in apis) if apis else "none",
            ".",
            class_="note",
        )
        return document("Catalog", heading, totals, form, missing, section="Catalog", visitor=visitor), 404
    chosen = [tool for tool in tools if not api or api_of(tool) == api]
    if not chosen:
        body: Html = tag(
            "p",
            "The catalog is empty: publish contracts (colonnade contract publish FILE) "
            "or list them under contracts: in colonnade.yaml.",
            class_="note",
        )
    elif query:
        body = _ranked(catalog, router, query, chosen)
    else:
        body = _grouped(catalog, chosen)
    return document("Catalog", heading, totals, form, body, section="Catalog", visitor=visitor), 200


def _search_form(query: str, api: str, apis: Sequence[str]) -> Html:
    options = [tag("option", "all APIs", value="")]
    options += [tag("option", name, value=name, selected=name == api) for name in apis]
    return tag(
        "form",
        tag(
            "input",
            type="search",
            name="q",
            value=query,
            placeholder="what should the tool do? e.g. refund an invoice",
            aria_label="search tools",
        ),
        tag("select", *options, name="api", aria_label="API"),
        tag("button", "Search", type="submit"),
        method="get",
        action=CATALOG_PATH,
        class_="search",
        role="search",
    )


def _grouped(catalog: Catalog, tools: Sequence[Tool]) -> Html:
    sections = []
    for api, members in groupby(tools, key=api_of):
        group = list(members)
        version = catalog.active_version(group[0].tenant, group[0].api)
        facts = [f"{len(group)} tools"] + ([f"version {version}"] if version else [])
        sections.append(
            join(
                tag(
                    "h2",
                    tag("a", api, href=api_url(api)),
                    " ",
                    tag("span", " · ".join(facts), class_="muted"),
                ),
                _tool_table(group),
            )
        )
    return join(*sections)


def _tool_table(tools: Sequence[Tool]) -> Html:
    head = tag(
        "tr",
        tag("th", "Tool"),
        tag("th", "Summary"),
        tag("th", "Side effects"),
        tag("th", "Approval"),
        tag("th", "Version"),
    )
    rows = (
        tag(
            "tr",
            tag("td", tag("strong", tool.title), tag("br"), tool_link(tool.canonical_name, tool.wire_name)),
            tag("td", tool.summary),
            tag("td", side_effects_badge(tool)),
            tag("td", governance_badges(tool)),
            tag("td", tool.version),
            data_tool=tool.canonical_name,
        )
        for tool in tools
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), class_="tools")


def _ranked(catalog: Catalog, router: Router, query: str, pool: Sequence[Tool]) -> Html:
    allowed = frozenset(tool.canonical_name for tool in pool)
    decision = router.route(query, caller_allowed=allowed, k=min(MAX_RESULTS, len(pool)))
    found = [tool for tool in map(catalog.get, decision.selected) if tool is not None]
    summary = tag(
        "p",
        f"{len(found)} tools for {decision.query_used!r}, best first; "
        f"router confidence {decision.confidence:.2f}.",
        id="search-summary",
    )
    if not found:
        hint = "No tool matches; try other words: what the tool does, or the name of its API."
        return join(summary, tag("p", hint, class_="note"))
    fallback = None
    if decision.fallback_used:
        fallback = tag(
            "p", "Low confidence: these are the configured fallback tools, not matches.", class_="note"
        )
    return join(summary, fallback, _ranked_table(found, decision))


def _ranked_table(tools: Sequence[Tool], decision: RoutingDecision) -> Html:
    head = tag(
        "tr",
        tag("th", "#", class_="num"),
        tag("th", "Tool"),
        tag("th", "API"),
        tag("th", "Score", class_="num"),
        tag("th", "Why"),
        tag("th", "Side effects"),
        tag("th", "Approval"),
    )
    rows = (
        tag(
            "tr",
            tag("td", rank, class_="num"),
            tag(
                "td",
                tag("strong", tool.title),
                tag("br"),
                tool_link(tool.canonical_name, tool.wire_name),
                tag("br"),
                tag("span", tool.summary, class_="muted"),
            ),
            tag("td", tag("a", api_of(tool), href=api_url(api_of(tool)))),
            tag("td", f"{decision.scores.get(tool.canonical_name, 0.0):.3f}", class_="num score"),
            tag(
                "td",
                tag(
                    "ul",
                    *(tag("li", why) for why in decision.reasons.get(tool.canonical_name, [])),
                    class_="reasons",
                ),
            ),
            tag("td", side_effects_badge(tool)),
            tag("td", governance_badges(tool)),
            data_tool=tool.canonical_name,
            data_rank=rank,
        )
        for rank, tool in enumerate(tools, start=1)
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), class_="tools ranked")
