"""Routing turns as stored: one row per turn, rewritten while the turn is open (its calls grow)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.observability.routing_turns import RoutingTurn, TurnCall
from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import RoutingTurnRow
from colonnade.store.write_gate import WriteGate

__all__ = ["RoutingTurnStore"]


class RoutingTurnStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def save(self, turns: list[RoutingTurn]) -> None:
        """Insert new turns and rewrite known ones, in one transaction."""
        async with self._write(), self._sessions.begin() as session:
            ids = [turn.id for turn in turns]
            found = {
                row.id: row
                for row in await session.scalars(select(RoutingTurnRow).where(RoutingTurnRow.id.in_(ids)))
            }
            for turn in turns:
                calls = [{"tool": c.tool, "outcome": c.outcome, "at": c.at.isoformat()} for c in turn.calls]
                row = found.get(turn.id)
                if row is None:
                    session.add(
                        RoutingTurnRow(
                            id=turn.id,
                            at=turn.at,
                            session=turn.session,
                            consumer=turn.consumer,
                            tenant=turn.tenant,
                            query=turn.query,
                            shown=list(turn.shown),
                            calls=calls,
                            confidence=turn.confidence,
                            fallback=turn.fallback,
                        )
                    )
                else:
                    row.calls = calls

    async def recent(
        self,
        *,
        tenant: str | None = None,
        consumer: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[RoutingTurn]:
        """The newest turns (newest first) from `since` on and before `until`, of one tenant and one
        consumer when they are given."""
        query = select(RoutingTurnRow)
        if tenant is not None:
            query = query.where(RoutingTurnRow.tenant == tenant)
        if consumer is not None:
            query = query.where(RoutingTurnRow.consumer == consumer)
        if since is not None:
            query = query.where(RoutingTurnRow.at >= since)
        if until is not None:
            query = query.where(RoutingTurnRow.at < until)
        query = query.order_by(RoutingTurnRow.at.desc(), RoutingTurnRow.id).limit(limit)
        async with self._sessions() as session:
            return [_turn(row) for row in await session.scalars(query)]

    async def purge_before(self, cutoff: datetime) -> int:
        """Drop turns that began before `cutoff`; returns how many went."""
        async with self._write(), self._sessions.begin() as session:
            done = await session.execute(delete(RoutingTurnRow).where(RoutingTurnRow.at < cutoff))
        return int(getattr(done, "rowcount", 0) or 0)


def _turn(row: RoutingTurnRow) -> RoutingTurn:
    return RoutingTurn(
        id=row.id,
        at=aware(row.at),
        session=row.session,
        consumer=row.consumer,
        tenant=row.tenant,
        query=row.query,
        shown=tuple(row.shown),
        confidence=row.confidence,
        fallback=row.fallback,
        calls=tuple(
            TurnCall(str(c["tool"]), str(c["outcome"]), datetime.fromisoformat(str(c["at"])))
            for c in row.calls
        ),
    )
