"""Where request handlers find the app's database."""

from __future__ import annotations

import sqlite3

from starlette.requests import Request

from examples.demo_backend.db import DemoDatabase

__all__ = ["connection_of"]


def connection_of(request: Request) -> sqlite3.Connection:
    database = request.app.state.database
    assert isinstance(database, DemoDatabase)
    return database.connection
