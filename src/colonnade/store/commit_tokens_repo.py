"""Commit tokens of two-phase calls: prepared -> committed, or -> rolled back after the deadline.

Every transition is a compare-and-set on the state, so a token is consumed at most once even
with several replicas sweeping and committing at the same time. Tokens that reached a final state
(committed, rolled back, failed) are purged once they are older than the retention, so the table
does not grow with every two-phase call ever made; prepared tokens are never purged, the sweep
rolls them back first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from colonnade.store.engine import session_factory
from colonnade.store.tables import CommitTokenRow
from colonnade.store.write_gate import WriteGate

__all__ = ["FINISHED_STATES", "CommitTokenStore", "PreparedCall", "TokenState"]

TokenState = Literal["prepared", "committing", "committed", "compensating", "rolled_back", "failed"]
FINISHED_STATES: tuple[TokenState, ...] = ("committed", "rolled_back", "failed")


@dataclass(frozen=True, slots=True)
class PreparedCall:
    token: str
    tool: str
    version: str
    input: dict[str, Any]
    prepared: Any
    state: str
    deadline: datetime
    attempts: int


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _record(row: CommitTokenRow) -> PreparedCall:
    return PreparedCall(
        row.token,
        row.tool,
        row.version,
        dict(row.input),
        row.prepared,
        row.state,
        _aware(row.deadline),
        row.attempts,
    )


class CommitTokenStore:
    def __init__(self, bind: AsyncEngine | async_sessionmaker[AsyncSession]) -> None:
        self._sessions = session_factory(bind) if isinstance(bind, AsyncEngine) else bind
        self._write = WriteGate(bind if isinstance(bind, AsyncEngine) else None)

    async def create(
        self, token: str, *, tool: str, version: str, input: dict[str, Any], prepared: Any, deadline: datetime
    ) -> None:
        now = _now()
        async with self._write(), self._sessions.begin() as session:
            session.add(
                CommitTokenRow(
                    token=token,
                    tool=tool,
                    version=version,
                    input=input,
                    prepared=prepared,
                    state="prepared",
                    deadline=deadline,
                    attempts=0,
                    created_at=now,
                    updated_at=now,
                )
            )

    async def get(self, token: str) -> PreparedCall | None:
        async with self._sessions() as session:
            row = await session.get(CommitTokenRow, token)
            return _record(row) if row is not None else None

    async def transition(
        self, token: str, source: TokenState, target: TokenState, *, live_only: bool = False
    ) -> bool:
        """Move `source` -> `target` atomically; False when the token was not in `source` (or expired)."""
        query = update(CommitTokenRow).where(CommitTokenRow.token == token, CommitTokenRow.state == source)
        if live_only:
            query = query.where(CommitTokenRow.deadline > _now())
        async with self._write(), self._sessions.begin() as session:
            result = await session.execute(
                query.values(state=target, updated_at=_now(), attempts=CommitTokenRow.attempts + 1)
            )
        return bool(getattr(result, "rowcount", 0))

    async def due(self, limit: int = 100) -> list[PreparedCall]:
        """Prepared tokens whose deadline has passed (and compensations to try again)."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(CommitTokenRow)
                .where(
                    CommitTokenRow.state.in_(("prepared", "compensating")), CommitTokenRow.deadline <= _now()
                )
                .order_by(CommitTokenRow.deadline)
                .limit(limit)
            )
            return [_record(row) for row in rows]

    async def purge_finished(self, *, retention_s: float, batch: int = 1_000) -> int:
        """Delete tokens in a final state last changed over `retention_s` ago, `batch` per transaction."""
        cutoff = _now() - timedelta(seconds=retention_s)
        purged = 0
        while True:
            stale = (
                select(CommitTokenRow.token)
                .where(CommitTokenRow.state.in_(FINISHED_STATES), CommitTokenRow.updated_at <= cutoff)
                .limit(batch)
            )
            async with self._write(), self._sessions.begin() as session:
                purge = delete(CommitTokenRow).where(CommitTokenRow.token.in_(stale))
                result = await session.execute(purge.execution_options(synchronize_session=False))
            deleted = int(getattr(result, "rowcount", 0) or 0)
            purged += deleted
            if deleted < batch:
                return purged
