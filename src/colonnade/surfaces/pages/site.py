"""The pages as Starlette routes: each checks Host/Origin, then renders in a worker thread.

Rendering runs off the event loop (as `/metrics` does): with thousands of tools a catalog page
or a read of every metric series is enough work to delay calls in flight.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.manifest import Manifests
from colonnade.catalog.catalog import Catalog
from colonnade.observability.metrics import GatewayMetrics
from colonnade.routing.router import Router
from colonnade.surfaces.pages.catalog_page import catalog_page
from colonnade.surfaces.pages.guard import HostGuard
from colonnade.surfaces.pages.html import Html
from colonnade.surfaces.pages.layout import CATALOG_PATH, METRICS_PATH, TOOLS_PATH, page_response
from colonnade.surfaces.pages.metric_values import read_stats
from colonnade.surfaces.pages.metrics_page import metrics_page
from colonnade.surfaces.pages.tool_page import tool_page, unknown_tool_page

__all__ = ["Pages", "routes"]

Handler = Callable[[Request], Awaitable[Response]]


class Pages:
    """The read-only pages of one gateway, over the parts it already owns."""

    def __init__(
        self,
        catalog: Catalog,
        router: Router,
        metrics: GatewayMetrics,
        *,
        manifests: Manifests | None = None,
        transport_security: TransportSecuritySettings | None = None,
    ) -> None:
        self.catalog = catalog
        self.router = router
        self.metrics = metrics
        self.manifests = manifests if manifests is not None else Manifests()
        self._guard = HostGuard(transport_security)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self._guarded(self.home), methods=["GET"]),
            Route(CATALOG_PATH, self._guarded(self.catalog_view), methods=["GET"]),
            # `path`: a name with `/` (other sources allow one) reaches its tool or the 404 page
            Route(TOOLS_PATH + "/{name:path}", self._guarded(self.tool_view), methods=["GET"]),
            Route(METRICS_PATH, self._guarded(self.metrics_view), methods=["GET"]),
        ]

    async def home(self, _: Request) -> Response:
        return RedirectResponse(CATALOG_PATH)

    async def catalog_view(self, request: Request) -> Response:
        params = request.query_params
        page, status = await run_in_threadpool(
            catalog_page, self.catalog, self.router, query=params.get("q", ""), api=params.get("api", "")
        )
        return page_response(page, status)

    async def tool_view(self, request: Request) -> Response:
        name = request.path_params["name"]
        tool = self.catalog.get(name)
        if tool is None:
            return page_response(await run_in_threadpool(unknown_tool_page, self.catalog, name), 404)
        page = await run_in_threadpool(lambda: tool_page(self.catalog, tool, self.manifests.for_tool(tool)))
        return page_response(page)

    async def metrics_view(self, _: Request) -> Response:
        page: Html = await run_in_threadpool(lambda: metrics_page(read_stats(self.metrics)))
        return page_response(page)

    def _guarded(self, handler: Handler) -> Handler:
        async def guarded(request: Request) -> Response:
            refused = await self._guard.refusal(request)
            return refused if refused is not None else await handler(request)

        return guarded


def routes(
    catalog: Catalog,
    router: Router,
    metrics: GatewayMetrics,
    *,
    manifests: Manifests | None = None,
    transport_security: TransportSecuritySettings | None = None,
) -> list[BaseRoute]:
    """`/`, `/ui/catalog`, `/ui/tools/{name}` and `/ui/metrics`, for `build_http_app(extra_routes=...)`."""
    pages = Pages(catalog, router, metrics, manifests=manifests, transport_security=transport_security)
    return pages.routes()
