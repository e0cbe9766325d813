"""Real faults of the gateway's own database: a held write lock, and connections cut by the server.

`locked_store` holds the idempotency table's write lock from a connection of its own, as a long
transaction of another process would: on SQLite an exclusive transaction on the file, on
PostgreSQL `LOCK TABLE` (`locked_table` does the same for any table; on SQLite, the whole file).
`cut_connections` has PostgreSQL terminate the sessions of one `application_name`, which is what a
database restart or a failover does to a gateway's pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["cut_connections", "locked_store", "locked_table"]


@contextlib.asynccontextmanager
async def locked_store(engine: AsyncEngine) -> AsyncIterator[None]:
    """While inside, nobody else can write idempotency records (readers still can on SQLite)."""
    async with locked_table(engine, "idempotency_records"):
        yield


@contextlib.asynccontextmanager
async def locked_table(engine: AsyncEngine, table: str) -> AsyncIterator[None]:
    """While inside, nobody else can use `table` (on PostgreSQL) or write the database (on SQLite)."""
    if engine.dialect.name == "sqlite":
        async with _sqlite_locked(str(engine.url.database)):
            yield
        return
    async with engine.begin() as conn:  # the lock lasts until this transaction ends
        await conn.execute(text(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
        yield


@contextlib.asynccontextmanager
async def _sqlite_locked(database: str) -> AsyncIterator[None]:
    conn = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    try:
        while True:  # the gateway's own writes hold the lock for microseconds at a time
            try:
                conn.execute("BEGIN EXCLUSIVE")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                await asyncio.sleep(0.001)
        try:
            yield
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()


async def cut_connections(admin: AsyncEngine, application_name: str) -> int:
    """Terminate every PostgreSQL session named `application_name`; returns how many were cut."""
    async with admin.connect() as conn:
        cut = await conn.execute(
            text(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = :name AND pid <> pg_backend_pid()"
            ),
            {"name": application_name},
        )
        return int(cut.scalar_one())
