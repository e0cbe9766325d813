"""The HTTP application: MCP Streamable HTTP at /mcp plus health endpoints, one Starlette app."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from colonnade import __version__
from colonnade.surfaces.header_whitespace import StripHeaderWhitespace
from colonnade.surfaces.mcp_server import McpSurface

__all__ = ["build_http_app", "transport_security_for"]

Readiness = Callable[[], Awaitable[dict[str, Any]]]


def build_http_app(
    surface: McpSurface,
    *,
    host: str = "127.0.0.1",
    readiness: Readiness | None = None,
    extra_routes: list[BaseRoute] | None = None,
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[None]] | None = None,
) -> Starlette:
    """Compose the MCP endpoint, /healthz (process alive) and /readyz (dependencies ready)."""
    mcp_app = surface.server.streamable_http_app(
        host=host, json_response=True, transport_security=transport_security_for(host)
    )

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    async def readyz(_: Request) -> JSONResponse:
        checks = await readiness() if readiness is not None else {}
        ready = all(bool(v.get("ok")) if isinstance(v, dict) else bool(v) for v in checks.values())
        body = {"status": "ready" if ready else "not ready", "tools": len(surface.catalog), "checks": checks}
        return JSONResponse(body, status_code=200 if ready else 503)

    @contextlib.asynccontextmanager
    async def app_lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if lifespan is not None:
                await stack.enter_async_context(lifespan())
            await stack.enter_async_context(surface.server.session_manager.run())
            yield

    routes: list[BaseRoute] = [
        *mcp_app.routes,
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        *(extra_routes or []),
    ]
    trimmed = [Middleware(StripHeaderWhitespace)]
    return Starlette(routes=routes, lifespan=app_lifespan, middleware=trimmed)


def transport_security_for(host: str) -> TransportSecuritySettings:
    """DNS-rebinding protection when serving on loopback; behind a real hostname a proxy decides.

    Any loopback address counts (127.0.0.2 or ::1 as well as 127.0.0.1 and localhost), and the
    address actually bound is accepted in Host and Origin along with the usual loopback names.
    """
    if not _is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    bound = f"[{host}]" if ":" in host else host
    names = list(dict.fromkeys([bound, "127.0.0.1", "localhost", "[::1]"]))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
