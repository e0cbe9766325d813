"""The `mcp` SDK's span per request, kept only where a span can be recorded.

Every SDK `Server` opens an OpenTelemetry span per request (its `OpenTelemetryMiddleware`). When
the gateway records no spans and no global tracer provider is installed, that span records
nothing, and its only effect, a client's `_meta` traceparent as the current context, matters only
to a recording tracer; it costs about 14 us per request. Both MCP surfaces (`/mcp` and each
`/servers/{name}/mcp`) drop it then.
"""

from __future__ import annotations

from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.lowlevel.server import Server
from opentelemetry import trace

__all__ = ["drop_idle_sdk_spans"]


def drop_idle_sdk_spans(server: Server[Any], *, sdk_spans: bool) -> None:
    """Remove the SDK's span middleware from `server` unless spans are recorded (`sdk_spans`) or a
    global tracer provider is installed (someone else records the SDK's spans)."""
    if sdk_spans or not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return
    server.middleware[:] = [
        layer for layer in server.middleware if not isinstance(layer, OpenTelemetryMiddleware)
    ]
