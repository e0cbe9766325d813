"""The gateway's alerts as stored: one row per rule and subject, firing or resolved.

`reconcile` writes one evaluation round in one transaction: what fires now is firing (its
`fired_at` kept while it keeps firing, new when it fires again), what fired before and does not
now is resolved, so the history of one alert is its last firing and its resolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import AlertRow
from colonnade.store.write_gate import WriteGate

__all__ = ["AlertRecord", "AlertStore"]


@dataclass(frozen=True, slots=True)
class AlertRecord:
    rule: str
    subject: str
    tenant: str | None
    state: str
    message: str
    value: float | None
    threshold: float | None
    fired_at: datetime
    resolved_at: datetime | None
    updated_at: datetime


def _record(row: AlertRow) -> AlertRecord:
    return AlertRecord(
        row.rule,
        row.subject,
        row.tenant,
        row.state,
        row.message,
        row.value,
        row.threshold,
        aware(row.fired_at),
        aware(row.resolved_at) if row.resolved_at is not None else None,
        aware(row.updated_at),
    )


class AlertStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def reconcile(self, firing: Sequence[AlertRecord], now: datetime) -> list[AlertRecord]:
        """Store one round: `firing` fire now, every other firing alert resolves. Returns every alert."""
        wanted = {(alert.rule, alert.subject): alert for alert in firing}
        async with self._write(), self._sessions.begin() as session:
            rows = {(row.rule, row.subject): row for row in await session.scalars(select(AlertRow))}
            for key, alert in wanted.items():
                row = rows.get(key)
                if row is None:
                    fresh = replace(alert, state="firing", fired_at=now, resolved_at=None, updated_at=now)
                    session.add(AlertRow(**{name: getattr(fresh, name) for name in AlertRecord.__slots__}))
                    continue
                if row.state != "firing":
                    row.fired_at, row.resolved_at = now, None
                row.state, row.message, row.value, row.threshold = (
                    "firing",
                    alert.message,
                    alert.value,
                    alert.threshold,
                )
                row.tenant, row.updated_at = alert.tenant, now
            for key, row in rows.items():
                if key not in wanted and row.state == "firing":
                    row.state, row.resolved_at, row.updated_at = "resolved", now, now
            await session.flush()
            stored = await session.scalars(select(AlertRow).order_by(AlertRow.rule, AlertRow.subject))
            return [_record(row) for row in stored]

    async def list(self) -> list[AlertRecord]:
        async with self._sessions() as session:
            rows = await session.scalars(select(AlertRow).order_by(AlertRow.rule, AlertRow.subject))
            return [_record(row) for row in rows]
