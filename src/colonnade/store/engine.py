"""Async engines for the two supported databases: embedded SQLite (default) and PostgreSQL.

SQLite gets foreign keys (off by default in SQLite) and WAL (readers do not block the writer);
its folder is created on first use so `./.colonnade/` needs no setup step. PostgreSQL connections
are checked before each use (`pool_pre_ping`), so after a database restart or a cut connection the
pool reconnects by itself instead of handing out a dead connection. What a PostgreSQL engine was
given to connect with is remembered (`driver_connect_args`), so the group commit can open a driver
connection of its own with the same settings (schema, application name) outside the pool.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from colonnade.store.sqlite_direct import WAL_LIMIT_BYTES
from colonnade.store.store_errors import DatabaseUrlError

__all__ = [
    "SUPPORTED_DRIVERS",
    "create_store_engine",
    "driver_connect_args",
    "parse_database_url",
    "session_factory",
]

SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")
_EXAMPLES = "sqlite+aiosqlite:///.colonnade/colonnade.db or postgresql+asyncpg://user@host:5432/db"


def parse_database_url(url: str) -> URL:
    """Parse and check a database URL; the error never echoes a password."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise DatabaseUrlError(f"database URL is not a valid URL; expected e.g. {_EXAMPLES}") from None
    if parsed.drivername not in SUPPORTED_DRIVERS:
        shown = parsed.render_as_string(hide_password=True)
        raise DatabaseUrlError(
            f"database URL {shown!r} uses driver {parsed.drivername!r}; Colonnade needs an async driver: "
            f"{' or '.join(SUPPORTED_DRIVERS)} (e.g. {_EXAMPLES})"
        )
    return parsed


def create_store_engine(url: str, *, connect_args: Mapping[str, Any] | None = None) -> AsyncEngine:
    """Engine for `url`; `connect_args` go to the driver (e.g. asyncpg `server_settings`)."""
    parsed = parse_database_url(url)
    if parsed.get_backend_name() == "sqlite":
        _ensure_sqlite_folder(parsed)
        engine = create_async_engine(parsed, connect_args=dict(connect_args or {}))
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_async_engine(parsed, connect_args=dict(connect_args or {}), pool_pre_ping=True)
    _CONNECT_ARGS[engine.sync_engine] = dict(connect_args or {})
    return engine


_CONNECT_ARGS: weakref.WeakKeyDictionary[object, dict[str, Any]] = weakref.WeakKeyDictionary()


def driver_connect_args(engine: AsyncEngine) -> dict[str, Any]:
    """Keyword arguments for the driver's own `connect` that reach what the engine's pool reaches."""
    _, from_url = engine.dialect.create_connect_args(engine.url)
    return {**from_url, **_CONNECT_ARGS.get(engine.sync_engine, {})}


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose objects stay readable after commit (the store returns plain records)."""
    return async_sessionmaker(engine, expire_on_commit=False)


def _ensure_sqlite_folder(url: URL) -> None:
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return
    folder = Path(database).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUrlError(
            f"cannot create the folder {str(folder)!r} for the SQLite database: {exc.strerror}; "
            "set data_dir (COLONNADE_DATA_DIR) or COLONNADE_DATABASE_URL to a writable place"
        ) from None


def _sqlite_pragmas(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL survives a process crash; only a power cut may lose the last commits.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=5000")
        # A log restarted by this connection is cut back to the limit, never left at its largest size.
        cursor.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
    finally:
        cursor.close()
