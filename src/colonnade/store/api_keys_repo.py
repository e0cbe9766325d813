"""API keys at rest: the public id, the SHA-256 of the secret, and who the key acts as.

The secret itself is never stored: it is shown once when the key is made, and a presented key is
checked by hashing it again. Rotation makes a successor and shortens the old key's life to the
overlap, so clients can switch without an outage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import ApiKeyRow
from colonnade.store.write_gate import WriteGate

__all__ = ["ApiKeyRecord", "ApiKeyStore"]


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    id: str
    secret_hash: str
    owner: str
    tenant: str | None
    persona: str
    team: str | None
    scopes: tuple[str, ...]
    label: str | None
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None
    replaced_by: str | None


def _record(row: ApiKeyRow) -> ApiKeyRecord:
    return ApiKeyRecord(
        row.id,
        row.secret_hash,
        row.owner,
        row.tenant,
        row.persona,
        row.team,
        tuple(row.scopes),
        row.label,
        aware(row.created_at),
        aware(row.expires_at),
        aware(row.last_used_at),
        aware(row.revoked_at),
        row.replaced_by,
    )


class ApiKeyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def add(self, record: ApiKeyRecord) -> None:
        async with self._write(), self._sessions.begin() as session:
            session.add(_row(record))

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        async with self._sessions() as session:
            row = await session.get(ApiKeyRow, key_id)
            return _record(row) if row is not None else None

    async def list(self, tenant: str | None = None) -> list[ApiKeyRecord]:
        query = select(ApiKeyRow).order_by(ApiKeyRow.created_at, ApiKeyRow.id)
        if tenant is not None:
            query = query.where(ApiKeyRow.tenant == tenant)
        async with self._sessions() as session:
            return [_record(row) for row in await session.scalars(query)]

    async def rotate(self, old_id: str, successor: ApiKeyRecord, old_expires_at: datetime) -> bool:
        """Add the successor and shorten the old key's life, in one transaction; False if it was revoked."""
        async with self._write(), self._sessions.begin() as session:
            changed = await session.execute(
                update(ApiKeyRow)
                .where(ApiKeyRow.id == old_id, ApiKeyRow.revoked_at.is_(None))
                .values(expires_at=old_expires_at, replaced_by=successor.id)
            )
            if not getattr(changed, "rowcount", 0):
                return False
            session.add(_row(successor))
        return True

    async def revoke(self, key_id: str, when: datetime) -> bool:
        async with self._write(), self._sessions.begin() as session:
            changed = await session.execute(
                update(ApiKeyRow)
                .where(ApiKeyRow.id == key_id, ApiKeyRow.revoked_at.is_(None))
                .values(revoked_at=when)
            )
        return bool(getattr(changed, "rowcount", 0))

    async def touch(self, key_id: str, when: datetime) -> None:
        async with self._write(), self._sessions.begin() as session:
            await session.execute(update(ApiKeyRow).where(ApiKeyRow.id == key_id).values(last_used_at=when))


def _row(record: ApiKeyRecord) -> ApiKeyRow:
    """A new key's row: never used, never revoked, never replaced yet."""
    return ApiKeyRow(
        id=record.id,
        secret_hash=record.secret_hash,
        owner=record.owner,
        tenant=record.tenant,
        persona=record.persona,
        team=record.team,
        scopes=list(record.scopes),
        label=record.label,
        created_at=record.created_at,
        expires_at=record.expires_at,
        last_used_at=None,
        revoked_at=None,
        replaced_by=None,
    )
