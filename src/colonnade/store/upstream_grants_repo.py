"""Per-user grants at upstream OAuth providers (mode user_oauth): one row per principal and provider.

The repository stores what it is given: the refresh token arrives sealed (`Sealer.seal`) and
leaves sealed; it never sees a token in clear. A rotation replaces the sealed value only if the
row still holds the one the caller refreshed with, so two replicas refreshing at once cannot
overwrite a newer token with an older one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import UpstreamGrantRow
from colonnade.store.write_gate import WriteGate

__all__ = ["GrantRecord", "UpstreamGrantStore"]


@dataclass(frozen=True, slots=True)
class GrantRecord:
    principal: str
    provider: str
    tenant: str | None
    subject: str
    scopes: tuple[str, ...]
    sealed_refresh_token: str
    created_at: datetime
    updated_at: datetime


def _record(row: UpstreamGrantRow) -> GrantRecord:
    return GrantRecord(
        row.principal,
        row.provider,
        row.tenant,
        row.subject,
        tuple(row.scopes),
        row.refresh_token,
        aware(row.created_at),
        aware(row.updated_at),
    )


class UpstreamGrantStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def get(self, principal: str, provider: str) -> GrantRecord | None:
        async with self._sessions() as session:
            row = await session.get(UpstreamGrantRow, (principal, provider))
            return _record(row) if row is not None else None

    async def of_principal(self, principal: str) -> list[GrantRecord]:
        async with self._sessions() as session:
            statement = select(UpstreamGrantRow).where(UpstreamGrantRow.principal == principal)
            rows = (await session.scalars(statement.order_by(UpstreamGrantRow.provider))).all()
            return [_record(row) for row in rows]

    async def put(self, record: GrantRecord) -> None:
        """Add the grant, or replace the principal's earlier grant at the same provider."""
        async with self._write(), self._sessions.begin() as session:
            row = await session.get(UpstreamGrantRow, (record.principal, record.provider))
            if row is None:
                row = UpstreamGrantRow(principal=record.principal, provider=record.provider)
                row.created_at = record.created_at
                session.add(row)
            row.tenant = record.tenant
            row.subject = record.subject
            row.scopes = list(record.scopes)
            row.refresh_token = record.sealed_refresh_token
            row.updated_at = record.updated_at

    async def rotate(self, principal: str, provider: str, was: str, now: str) -> bool:
        """Replace the sealed refresh token `was` by `now`; False when the row holds another (or none)."""
        statement = (
            update(UpstreamGrantRow)
            .where(
                UpstreamGrantRow.principal == principal,
                UpstreamGrantRow.provider == provider,
                UpstreamGrantRow.refresh_token == was,
            )
            .values(refresh_token=now, updated_at=datetime.now(UTC))
        )
        async with self._write(), self._sessions.begin() as session:
            return bool(getattr(await session.execute(statement), "rowcount", 0))

    async def remove(self, principal: str, provider: str | None = None) -> list[GrantRecord]:
        """Delete the principal's grant at `provider` (every grant when None); the rows deleted."""
        async with self._write(), self._sessions.begin() as session:
            chosen = select(UpstreamGrantRow).where(UpstreamGrantRow.principal == principal)
            if provider is not None:
                chosen = chosen.where(UpstreamGrantRow.provider == provider)
            rows = [_record(row) for row in (await session.scalars(chosen)).all()]
            if rows:
                gone = delete(UpstreamGrantRow).where(UpstreamGrantRow.principal == principal)
                if provider is not None:
                    gone = gone.where(UpstreamGrantRow.provider == provider)
                await session.execute(gone)
            return rows
