"""The demo backend as one Starlette app: the CRM and billing endpoints plus `GET /healthz`."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from examples.demo_backend import customers, emails, invoices
from examples.demo_backend.db import DEFAULT_DB_PATH, DemoDatabase
from examples.demo_backend.errors import ApiError, handle_api_error, handle_http_exception

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "TraceparentLog", "create_app"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8766
logger = logging.getLogger("demo_backend")


class TraceparentLog:
    """Reads each request's W3C `traceparent`, as an instrumented backend would: the trace id is
    logged and the last headers kept in `seen` (`app.state.traceparents`), so a demo (or a test) can
    see that the gateway's request carried the caller's trace."""

    def __init__(self, app: ASGIApp, seen: deque[str]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"traceparent":
                    header = value.decode("latin-1")
                    self.seen.append(header)
                    logger.info("%s %s trace_id=%s", scope["method"], scope["path"], header[3:35])
        await self.app(scope, receive, send)


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def create_app(db_path: str | Path = DEFAULT_DB_PATH) -> Starlette:
    """Build the app over the SQLite file at `db_path`, created and seeded on first start."""
    database = DemoDatabase(db_path)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        database.open()  # at start-up, so that a bad path fails before serving
        try:
            yield
        finally:
            database.close()

    seen: deque[str] = deque(maxlen=100)
    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            *customers.routes,
            *emails.routes,
            *invoices.routes,
        ],
        exception_handlers={ApiError: handle_api_error, HTTPException: handle_http_exception},
        lifespan=lifespan,
        middleware=[Middleware(TraceparentLog, seen=seen)],
    )
    app.state.database = database
    app.state.traceparents = seen
    return app
