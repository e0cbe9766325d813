"""The HTTP application: every surface behind the one HTTP edge, composed in one place.

MCP Streamable HTTP at /mcp and each downstream server's own at /servers/{name}/mcp, REST under
/v1, pages at / and /ui, Prometheus at /metrics, and the probes /healthz (process alive) and
/readyz (dependencies ready). Each surface brings its
routes and, where it has one, its lifespan and its way of rendering the edge's refusals.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Scope

from colonnade._version import __version__
from colonnade.calls.call_errors import error
from colonnade.surfaces.edge import (
    DEFAULT_MAX_REQUEST_BYTES,
    OPEN_PATHS,
    Authenticator,
    DirectKey,
    DirectMatch,
    EdgeRefusal,
    HttpEdge,
    OriginPolicy,
    RefusalRenderer,
)
from colonnade.surfaces.header_whitespace import StripHeaderWhitespace
from colonnade.surfaces.mcp.server import McpSurface
from colonnade.surfaces.mcp.sessions import BoundedSessionManager, SessionLedger
from colonnade.surfaces.pages import guard as pages_guard
from colonnade.surfaces.rest import routes as rest_routes
from colonnade.surfaces.unknown_routes import UNKNOWN_ROUTE_HANDLERS

__all__ = ["HttpSurfaces", "build_http_app"]

Readiness = Callable[[], Awaitable[dict[str, Any]]]
Lifespan = Callable[[], contextlib.AbstractAsyncContextManager[None]]
# The edge's refusals of a request body, as JSON-RPC errors: invalid request, or parse error.
_JSON_RPC_CODES = {
    "I-REQ-TOO-LARGE": -32600,
    "I-REQ-MEDIA-TYPE": -32600,
    "I-REQ-DUPLICATE-KEY": -32600,
    "I-REQ-ENVELOPE": -32600,
    "I-REQ-ENCODING": -32700,
}
# The JSON APIs, where the edge applies one rule to request bodies (`json_input.py`).
JSON_PREFIXES = ("/mcp", "/servers", "/v1")
# The edge checks Host and Origin for every route, /mcp included; the SDK's own copy stays off.
_NO_SDK_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _mcp_refusal(refusal: EdgeRefusal, scope: Scope) -> Response:
    """A refused request body at /mcp gets a JSON-RPC error whose `data` is the gateway's typed error
    (the same code as on REST); Host/Origin refusals read as the MCP SDK's own (clients and the
    conformance suite know them); an authentication refusal says its code and why (its
    `WWW-Authenticate` header says where next)."""
    rpc_code = _JSON_RPC_CODES.get(refusal.code)
    if rpc_code is not None:
        _, err = error(refusal.code, refusal.message, **refusal.details)
        body = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": rpc_code, "message": err.message, "data": err.model_dump()},
        }
        return JSONResponse(body, status_code=refusal.http_status)
    text = {("A-AUTH-ORIGIN", 421): "Invalid Host header", ("A-AUTH-ORIGIN", 403): "Invalid Origin header"}
    shown = text.get((refusal.code, refusal.http_status), f"{refusal.code}: {refusal.message}")
    return PlainTextResponse(shown, status_code=refusal.http_status)


class HttpSurfaces:
    """What the HTTP app is composed of; everything but the MCP surface is optional."""

    def __init__(
        self,
        mcp: McpSurface,
        *,
        routes: list[BaseRoute] | None = None,
        direct_match: DirectMatch | None = None,
        readiness: Readiness | None = None,
        lifespan: Lifespan | None = None,
        direct: Mapping[DirectKey, ASGIApp] | None = None,
    ) -> None:
        """`direct`: routes among `routes` the HTTP edge may serve past the router (`HttpEdge`);
        `direct_match` names the apps of a family of paths it may serve so (each must be the one the
        routes would pick for that path)."""
        self.mcp = mcp
        self.routes = routes or []
        self.direct = dict(direct or {})
        self.direct_match = direct_match
        self.readiness = readiness
        self.lifespan = lifespan


def build_http_app(
    surfaces: HttpSurfaces,
    *,
    origins: OriginPolicy,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    authenticate: Authenticator | None = None,
    open_paths: frozenset[str] = OPEN_PATHS,
    sessions: SessionLedger | None = None,
    session_streams: bool = True,
    plain_calls: bool = True,
) -> Starlette:
    """`sessions` bounds the MCP sessions of `/mcp` (share it with the `/servers/...` endpoints' managers).

    Stateless (2026-07-28) requests are answered with one JSON body; with `session_streams`, the
    requests of a handshake-era session whose client declares elicitation are answered over SSE so
    that the gateway can ask it mid-call. `plain_calls` serves a plain 2026-07-28 `tools/call`
    beside the SDK's transport (`surfaces/mcp/plain_call.py`); off, the SDK serves every request.
    """
    session_manager = BoundedSessionManager(
        surfaces.mcp.server,
        sessions if sessions is not None else SessionLedger(),
        on_end=surfaces.mcp.session_ended,
        on_restore=surfaces.mcp.restore_session,
        json_response=True,
        session_streams=session_streams,
        plain_calls=plain_calls,
        security_settings=_NO_SDK_CHECK,
    )
    readiness = surfaces.readiness

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    async def readyz(_: Request) -> JSONResponse:
        checks = await readiness() if readiness is not None else {}
        ready = all(bool(v.get("ok")) if isinstance(v, dict) else bool(v) for v in checks.values())
        body = {
            "status": "ready" if ready else "not ready",
            "tools": len(surfaces.mcp.catalog),
            "checks": checks,
        }
        return JSONResponse(body, status_code=200 if ready else 503)

    @contextlib.asynccontextmanager
    async def app_lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if surfaces.lifespan is not None:
                await stack.enter_async_context(surfaces.lifespan())
            await stack.enter_async_context(session_manager.run())
            yield

    mcp_app = StreamableHTTPASGIApp(session_manager)
    routes: list[BaseRoute] = [
        Route("/mcp", mcp_app),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        *surfaces.routes,
    ]
    renderers: dict[str, RefusalRenderer] = {
        "/mcp": _mcp_refusal,
        "/servers": _mcp_refusal,
        "/v1": rest_routes.render_refusal,
        "/": pages_guard.render_refusal,
        "/metrics": lambda refusal, _: PlainTextResponse(
            f"{refusal.code}: {refusal.message}\n", refusal.http_status
        ),
    }
    edge_options: dict[str, Any] = {
        "origins": origins,
        "renderers": renderers,
        "max_request_bytes": max_request_bytes,
        "open_paths": open_paths,
        "json_prefixes": JSON_PREFIXES,
        "direct": {"/mcp": mcp_app, **surfaces.direct},
        "direct_match": surfaces.direct_match,
    }
    if authenticate is not None:
        edge_options["authenticate"] = authenticate
    middleware = [Middleware(StripHeaderWhitespace), Middleware(HttpEdge, **edge_options)]
    return Starlette(
        routes=routes,
        lifespan=app_lifespan,
        middleware=middleware,
        exception_handlers=dict(UNKNOWN_ROUTE_HANDLERS),
    )
