"""`GET /metrics`: the gateway's Prometheus metrics in the text exposition format.

OpenMetrics is served instead when the scraper asks for it in `Accept`. Rendering runs in a
worker thread: with thousands of tools the exposition is big enough to stall the event loop.
The same Host/Origin check as REST and the pages applies, so a page on a rebound DNS name cannot
read the gateway's call counts either.
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecuritySettings
from prometheus_client.exposition import choose_encoder
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from colonnade.observability.metrics import GatewayMetrics
from colonnade.surfaces.origin_check import OriginCheck

__all__ = ["metrics_route"]


def metrics_route(
    metrics: GatewayMetrics,
    path: str = "/metrics",
    *,
    transport_security: TransportSecuritySettings | None = None,
) -> Route:
    origins = OriginCheck(transport_security)

    async def exposition(request: Request) -> Response:
        refusal = await origins.refusal(request)
        if refusal is not None:
            return PlainTextResponse(refusal.message + "\n", status_code=refusal.http_status)
        encode, content_type = choose_encoder(request.headers.get("accept", ""))
        body = await run_in_threadpool(encode, metrics.registry)
        return Response(body, media_type=content_type)

    return Route(path, exposition, methods=["GET"], name="metrics")
