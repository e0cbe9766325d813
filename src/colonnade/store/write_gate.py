"""One writer at a time on SQLite, queued in the event loop instead of in SQLite's busy handler.

SQLite allows a single writer; concurrent write transactions from a pool of connections wait in
SQLite's busy handler, which sleeps in growing steps (up to 100 ms), so a burst of small writes
turns into long tail latency. Queuing writers on an asyncio lock keeps each write at about a
millisecond. PostgreSQL locks rows itself, so the gate is open there.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["WriteGate"]


_LOCKS: weakref.WeakKeyDictionary[object, asyncio.Lock] = weakref.WeakKeyDictionary()


class WriteGate:
    """Shared by every repository on the same engine, so all their writers queue together."""

    def __init__(self, engine: AsyncEngine | None) -> None:
        self._lock: asyncio.Lock | None = None
        if engine is not None and engine.dialect.name == "sqlite":
            self._lock = _LOCKS.setdefault(engine.sync_engine, asyncio.Lock())

    @contextlib.asynccontextmanager
    async def __call__(self) -> AsyncIterator[None]:
        if self._lock is None:
            yield
            return
        async with self._lock:
            yield
