"""Parked calls in the database: suspended by a stage, resumed once or expired by the sweep.

Every state change is a compare-and-set on the state, so a parked call is resumed at most once
and expired at most once, even with several replicas resuming and sweeping at the same time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from colonnade.store.engine import session_factory
from colonnade.store.tables import ParkedCallRow
from colonnade.store.write_gate import WriteGate

__all__ = ["ParkedCallStore", "ParkedRecord", "ParkedState"]

ParkedState = Literal["parked", "resuming", "resumed", "expiring", "expired", "failed"]
_FINISHED: tuple[ParkedState, ...] = ("resumed", "expired", "failed")


@dataclass(frozen=True, slots=True)
class ParkedRecord:
    token: str
    reason: str
    tool: str
    version: str
    principal: str
    input: dict[str, Any]
    input_hash: str
    payload: Any
    state: str
    deadline: datetime
    attempts: int
    call_id: str | None = None
    """The call that parked it (None for rows parked before the gateway recorded it)."""
    tenant: str | None = None
    """The tenant of the principal that parked it (its key alone does not say)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _record(row: ParkedCallRow) -> ParkedRecord:
    return ParkedRecord(
        row.token,
        row.reason,
        row.tool,
        row.version,
        row.principal,
        dict(row.input),
        row.input_hash,
        row.payload,
        row.state,
        _aware(row.deadline),
        row.attempts,
        row.call_id,
        row.tenant,
    )


class ParkedCallStore:
    def __init__(self, bind: AsyncEngine | async_sessionmaker[AsyncSession]) -> None:
        self._sessions = session_factory(bind) if isinstance(bind, AsyncEngine) else bind
        self._write = WriteGate(bind if isinstance(bind, AsyncEngine) else None)

    async def create(self, record: ParkedRecord) -> None:
        now = _now()
        async with self._write(), self._sessions.begin() as session:
            session.add(
                ParkedCallRow(
                    token=record.token,
                    reason=record.reason,
                    tool=record.tool,
                    version=record.version,
                    principal=record.principal,
                    input=record.input,
                    input_hash=record.input_hash,
                    payload=record.payload,
                    state=record.state,
                    deadline=record.deadline,
                    attempts=record.attempts,
                    call_id=record.call_id,
                    tenant=record.tenant,
                    created_at=now,
                    updated_at=now,
                )
            )

    async def get(self, token: str) -> ParkedRecord | None:
        async with self._sessions() as session:
            row = await session.get(ParkedCallRow, token)
            return _record(row) if row is not None else None

    async def transition(
        self, token: str, source: ParkedState, target: ParkedState, *, live_only: bool = False
    ) -> bool:
        """Move `source` -> `target` atomically; False when the call was not in `source` (or expired)."""
        query = update(ParkedCallRow).where(ParkedCallRow.token == token, ParkedCallRow.state == source)
        if live_only:
            query = query.where(ParkedCallRow.deadline > _now())
        async with self._write(), self._sessions.begin() as session:
            result = await session.execute(
                query.values(state=target, updated_at=_now(), attempts=ParkedCallRow.attempts + 1)
            )
        return bool(getattr(result, "rowcount", 0))

    async def due(self, limit: int = 100) -> list[ParkedRecord]:
        """Parked calls past their deadline, and expiries to try again."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(ParkedCallRow)
                .where(ParkedCallRow.state.in_(("parked", "expiring")), ParkedCallRow.deadline <= _now())
                .order_by(ParkedCallRow.deadline)
                .limit(limit)
            )
            return [_record(row) for row in rows]

    async def purge_finished(self, *, retention_s: float, batch: int = 1_000) -> int:
        """Delete calls in a final state last changed over `retention_s` ago, `batch` per transaction.

        Parked calls are never purged: the sweep expires them first.
        """
        cutoff = _now() - timedelta(seconds=retention_s)
        purged = 0
        while True:
            stale = (
                select(ParkedCallRow.token)
                .where(ParkedCallRow.state.in_(_FINISHED), ParkedCallRow.updated_at <= cutoff)
                .limit(batch)
            )
            async with self._write(), self._sessions.begin() as session:
                purge = delete(ParkedCallRow).where(ParkedCallRow.token.in_(stale))
                result = await session.execute(purge.execution_options(synchronize_session=False))
            deleted = int(getattr(result, "rowcount", 0) or 0)
            purged += deleted
            if deleted < batch:
                return purged
