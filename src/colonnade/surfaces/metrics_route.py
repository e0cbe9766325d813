"""`GET /metrics`: the gateway's Prometheus metrics in the text exposition format.

OpenMetrics is served instead when the scraper asks for it in `Accept`. Rendering runs in a
worker thread: with thousands of tools the exposition is big enough to stall the event loop.
The HTTP edge's Host/Origin check applies here as everywhere, so a page on a rebound DNS name
cannot read the gateway's call counts either.
"""

from __future__ import annotations

from prometheus_client.exposition import choose_encoder
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from colonnade.observability.metrics import GatewayMetrics

__all__ = ["metrics_route"]


def metrics_route(metrics: GatewayMetrics, path: str = "/metrics") -> Route:
    async def exposition(request: Request) -> Response:
        encode, content_type = choose_encoder(request.headers.get("accept", ""))
        body = await run_in_threadpool(encode, metrics.registry)
        return Response(body, media_type=content_type)

    return Route(path, exposition, methods=["GET"], name="metrics")
