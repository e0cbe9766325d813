"""Subscriptions of consumers to APIs: requested (pending), active, rejected or revoked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import SubscriptionRow
from colonnade.store.write_gate import WriteGate

__all__ = ["SubscriptionRecord", "SubscriptionStore"]


@dataclass(frozen=True, slots=True)
class SubscriptionRecord:
    id: str
    subscriber: str
    tenant: str
    api: str
    state: str
    created_at: datetime
    updated_at: datetime
    decided_by: str | None = None


def _record(row: SubscriptionRow) -> SubscriptionRecord:
    return SubscriptionRecord(
        row.id,
        row.subscriber,
        row.tenant,
        row.api,
        row.state,
        aware(row.created_at),
        aware(row.updated_at),
        row.decided_by,
    )


class SubscriptionStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def add(self, record: SubscriptionRecord) -> None:
        async with self._write(), self._sessions.begin() as session:
            session.add(
                SubscriptionRow(
                    id=record.id,
                    subscriber=record.subscriber,
                    tenant=record.tenant,
                    api=record.api,
                    state=record.state,
                    created_at=record.created_at,
                    updated_at=record.updated_at,
                    decided_by=record.decided_by,
                )
            )

    async def get(self, subscription_id: str) -> SubscriptionRecord | None:
        async with self._sessions() as session:
            row = await session.get(SubscriptionRow, subscription_id)
            return _record(row) if row is not None else None

    async def list(
        self, *, tenant: str | None = None, subscriber: str | None = None, states: tuple[str, ...] = ()
    ) -> list[SubscriptionRecord]:
        query = select(SubscriptionRow).order_by(SubscriptionRow.created_at, SubscriptionRow.id)
        if tenant is not None:
            query = query.where(SubscriptionRow.tenant == tenant)
        if subscriber is not None:
            query = query.where(SubscriptionRow.subscriber == subscriber)
        if states:
            query = query.where(SubscriptionRow.state.in_(states))
        async with self._sessions() as session:
            return [_record(row) for row in await session.scalars(query)]

    async def transition(
        self, subscription_id: str, sources: tuple[str, ...], target: str, by: str, when: datetime
    ) -> bool:
        """Move from one of `sources` to `target` atomically; False when it was in none of them."""
        async with self._write(), self._sessions.begin() as session:
            changed = await session.execute(
                update(SubscriptionRow)
                .where(SubscriptionRow.id == subscription_id, SubscriptionRow.state.in_(sources))
                .values(state=target, decided_by=by, updated_at=when)
            )
        return bool(getattr(changed, "rowcount", 0))
