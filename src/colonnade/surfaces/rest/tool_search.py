"""`GET /v1/search?query=&k=&domain=`: the router's ranking of the tools the caller may see.

What `colonnade tools search` asks a running gateway, so that the ranking covers everything the
gateway serves (federated servers' tools included) as the caller's credential sees it. The same
router and the same visibility as the `search_tools` meta tool and the catalog page; the request
is authenticated at the HTTP edge like every other.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.catalog.catalog import Catalog
from colonnade.governance.authorization import AllowAll, Authorizer, permits
from colonnade.routing.router import CallerAllowed, Router, RoutingDecision
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.rest.render import error_response, json_response
from colonnade.surfaces.rest.views import tool_summary

__all__ = ["DEFAULT_K", "MAX_K", "SEARCH_PATH", "ToolSearch", "search_payload"]

SEARCH_PATH = "/v1/search"
DEFAULT_K = 10
MAX_K = 200


def search_payload(
    decision: RoutingDecision, catalog: Catalog, allowed: CallerAllowed = None
) -> dict[str, Any]:
    """The decision as JSON, with each selected tool's listing entry (wire name...), score and reasons."""
    tools = []
    for tool_id in decision.selected:
        tool = catalog.get(tool_id)
        if tool is not None and permits(allowed, tool.canonical_name):
            tools.append(
                {
                    **tool_summary(tool),
                    "score": decision.scores.get(tool_id, 0.0),
                    "reasons": decision.reasons.get(tool_id, []),
                }
            )
    return {**decision.to_json(), "tools": tools}


class ToolSearch:
    """The search route over one catalog, its router and the authorizer that decides what each caller sees."""

    def __init__(self, catalog: Catalog, router: Router, authorizer: Authorizer | None = None) -> None:
        self.catalog = catalog
        self.router = router
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()

    def routes(self) -> list[BaseRoute]:
        return [Route(SEARCH_PATH, self.search, methods=["GET"])]

    async def search(self, request: Request) -> Response:
        params = request.query_params
        query = params.get("query", "").strip()
        if not query:
            return error_response(
                "I-REQ-QUERY",
                "query is empty: say what the tool should do, in plain words",
                400,
                parameter="query",
            )
        k = _k(params.get("k"))
        if k is None:
            return error_response(
                "I-REQ-QUERY",
                f"k must be an integer from 1 to {MAX_K} (got {params['k']!r})",
                400,
                parameter="k",
                expected=f"integer 1-{MAX_K}",
            )
        allowed = self.authorizer.listed(principal_of_scope(request.scope))
        decision = self.router.route(
            query, caller_allowed=allowed, domain_hints=params.getlist("domain"), k=k
        )
        return json_response(search_payload(decision, self.catalog, allowed))


def _k(raw: str | None) -> int | None:
    if raw is None:
        return DEFAULT_K
    try:
        k = int(raw)
    except ValueError:
        return None
    return k if 1 <= k <= MAX_K else None
