"""Snapshots of failed calls: the envelope a caller was answered with, and its redacted arguments.

Written off the call's path (`submit` returns at once; a failing write is logged, never the call's
problem): a snapshot is a diagnostic, not a guarantee. Kept for the retention the gateway purges
with (`purge_older`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import ErrorSnapshotRow
from colonnade.store.write_gate import WriteGate

__all__ = ["ErrorSnapshot", "ErrorSnapshotStore"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ErrorSnapshot:
    call_id: str
    at: datetime
    tenant: str | None
    tool: str
    actor: str
    code: str
    trace_id: str
    arguments: dict[str, Any]
    envelope: dict[str, Any]


class ErrorSnapshotStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)
        self._pending: set[asyncio.Task[None]] = set()

    def submit(self, snapshot: ErrorSnapshot) -> None:
        """Store the snapshot in the background; the call's answer does not wait for it."""
        task = asyncio.get_running_loop().create_task(self._store(snapshot))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _store(self, snapshot: ErrorSnapshot) -> None:
        values = {name: getattr(snapshot, name) for name in ErrorSnapshot.__slots__}
        dialect = pg_insert if self._engine.dialect.name == "postgresql" else sqlite_insert
        try:
            async with self._write(), self._sessions.begin() as session:
                await session.execute(dialect(ErrorSnapshotRow).values(**values).on_conflict_do_nothing())
        except Exception as exc:  # a diagnostic: its loss is logged, never the call's failure
            logger.warning("a failed call's snapshot could not be stored: %s", type(exc).__name__)

    async def get(self, call_id: str) -> ErrorSnapshot | None:
        async with self._sessions() as session:
            row = await session.get(ErrorSnapshotRow, call_id)
        return _snapshot(row) if row is not None else None

    async def recent(self, tenant: str | None, since: datetime, limit: int) -> list[ErrorSnapshot]:
        query = select(ErrorSnapshotRow).where(ErrorSnapshotRow.at >= since)
        if tenant is not None:
            query = query.where(ErrorSnapshotRow.tenant == tenant)
        query = query.order_by(ErrorSnapshotRow.at.desc()).limit(limit)
        async with self._sessions() as session:
            return [_snapshot(row) for row in await session.scalars(query)]

    async def purge_older(self, before: datetime) -> int:
        async with self._write(), self._sessions.begin() as session:
            done = await session.execute(delete(ErrorSnapshotRow).where(ErrorSnapshotRow.at < before))
        return int(getattr(done, "rowcount", 0) or 0)

    async def drain(self) -> None:
        """Wait for the snapshots still being written (a closing gateway)."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)


def _snapshot(row: ErrorSnapshotRow) -> ErrorSnapshot:
    return ErrorSnapshot(
        row.call_id,
        aware(row.at),
        row.tenant,
        row.tool,
        row.actor,
        row.code,
        row.trace_id,
        dict(row.arguments),
        dict(row.envelope),
    )
