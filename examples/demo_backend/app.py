"""The demo backend as one Starlette app: the CRM and billing endpoints plus `GET /healthz`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from examples.demo_backend import customers, emails, invoices
from examples.demo_backend.db import DEFAULT_DB_PATH, DemoDatabase
from examples.demo_backend.errors import ApiError, handle_api_error, handle_http_exception

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "create_app"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8766


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

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            *customers.routes,
            *emails.routes,
            *invoices.routes,
        ],
        exception_handlers={ApiError: handle_api_error, HTTPException: handle_http_exception},
        lifespan=lifespan,
    )
    app.state.database = database
    return app
