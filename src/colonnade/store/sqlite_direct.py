"""A direct SQLite connection for small, hot writes on the embedded database (idempotency records).

On the call path every microsecond counts, and SQLAlchemy's async adapter pays several thread
round trips per statement (cursor, execute, fetch, begin, commit), each a thread wake-up.
A small write to a local WAL database with `synchronous=NORMAL` takes about 10 µs of CPU, so
it runs on the caller's thread inside `BEGIN IMMEDIATE`, which fails at once (`busy_timeout`
0) when another connection holds the write lock; only then does the unit of work move to a
worker thread that waits for the lock. Checkpoints, the one slow part of WAL writes (an
fsync), are taken off this connection (`wal_autocheckpoint=0`) and run on the worker thread
every `CHECKPOINT_EVERY` writes.

Callers serialize their use (see `WriteGate`). Values are stored exactly as SQLAlchemy stores
them (dates as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC, JSON as text), so rows written here and
through the ORM are interchangeable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["CHECKPOINT_EVERY", "SqliteDirect", "bind_all", "parse_date"]

T = TypeVar("T")
CHECKPOINT_EVERY = 500
_PATIENCE_MS = 5_000
_DATE_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def _bind(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime(_DATE_FORMAT)
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value


def bind_all(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _bind(value) for name, value in params.items()}


def parse_date(value: str) -> datetime:
    return datetime.strptime(value, _DATE_FORMAT).replace(tzinfo=UTC)


@contextlib.contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction that takes the write lock first, so nothing is half done when busy."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


class SqliteDirect:
    def __init__(self, database: str | Path) -> None:
        self.database = str(database)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="colonnade-sqlite")
        self._conn: sqlite3.Connection | None = None
        self._writes = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.database, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute("PRAGMA busy_timeout=0")
            self._conn = conn
        return self._conn

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run `work(connection)` in one write transaction: here if the lock is free, else on the worker."""
        conn = self._connection()
        try:
            with _immediate(conn):
                result = work(conn)
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            result = await asyncio.get_running_loop().run_in_executor(self._executor, self._patiently, work)
        self._writes += 1
        if self._writes % CHECKPOINT_EVERY == 0:
            asyncio.get_running_loop().run_in_executor(self._executor, self._checkpoint)
        return result

    def _patiently(self, work: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._connection()
        conn.execute(f"PRAGMA busy_timeout={_PATIENCE_MS}")
        try:
            with _immediate(conn):
                return work(conn)
        finally:
            conn.execute("PRAGMA busy_timeout=0")

    def _checkpoint(self) -> None:
        """Fold the WAL into the database from a connection of its own, without blocking writers."""
        with contextlib.closing(sqlite3.connect(self.database, isolation_level=None)) as conn:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    async def execute(self, sql: str, params: Mapping[str, Any]) -> int:
        """One statement with named `:params`; returns the number of rows changed."""
        bound = bind_all(params)
        return await self.write(lambda conn: conn.execute(sql, bound).rowcount)

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._checkpoint)
        self._executor.shutdown(wait=True)
        if self._conn is not None:
            self._conn.close()
            self._conn = None
