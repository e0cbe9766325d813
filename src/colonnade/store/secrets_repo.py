"""Stored secrets at rest: sealed versions per (tenant scope, name); the store never sees a value in clear.

Sealing and opening are the governance service's (`governance/secrets/`); this module keeps rows:
a new version and the end of its predecessors' overlap are written in one transaction, and
versions whose overlap has ended are purged by the next change of the same secret.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import SecretVersionRow
from colonnade.store.write_gate import WriteGate

__all__ = ["GATEWAY_SCOPE", "SecretVersion", "SecretVersionStore", "SecretVersionTaken"]

GATEWAY_SCOPE = "*"
"""The tenant column of the gateway's own secrets (readable for every tenant's backends)."""


class SecretVersionTaken(Exception):
    """Another writer stored the same version of the secret first."""


@dataclass(frozen=True, slots=True)
class SecretVersion:
    tenant: str
    name: str
    version: int
    sealed: str
    key_id: str
    created_at: datetime
    created_by: str
    valid_until: datetime | None
    """None: the current version; else the end of its rotation overlap."""


def _record(row: SecretVersionRow) -> SecretVersion:
    return SecretVersion(
        row.tenant,
        row.name,
        row.version,
        row.sealed,
        row.key_id,
        aware(row.created_at),
        row.created_by,
        aware(row.valid_until),
    )


class SecretVersionStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def versions(self, tenant: str, name: str) -> list[SecretVersion]:
        """Every kept version of one secret, newest first."""
        query = (
            select(SecretVersionRow)
            .where(SecretVersionRow.tenant == tenant, SecretVersionRow.name == name)
            .order_by(SecretVersionRow.version.desc())
        )
        async with self._sessions() as session:
            return [_record(row) for row in await session.scalars(query)]

    async def list(self, tenant: str | None = None) -> list[SecretVersion]:
        """Every kept version (of one tenant scope when given), by scope, name, newest version first."""
        query = select(SecretVersionRow).order_by(
            SecretVersionRow.tenant, SecretVersionRow.name, SecretVersionRow.version.desc()
        )
        if tenant is not None:
            query = query.where(SecretVersionRow.tenant == tenant)
        async with self._sessions() as session:
            return [_record(row) for row in await session.scalars(query)]

    async def add_version(
        self, record: SecretVersion, *, previous_valid_until: datetime, now: datetime
    ) -> None:
        """Store `record` as the next version; end the older ones' validity at `previous_valid_until`
        (never later than it already was) and purge the ended ones, in one transaction. A version
        another writer stored first raises `SecretVersionTaken`."""
        scope = (SecretVersionRow.tenant == record.tenant, SecretVersionRow.name == record.name)
        try:
            async with self._write(), self._sessions.begin() as session:
                await session.execute(
                    delete(SecretVersionRow).where(
                        *scope, SecretVersionRow.valid_until.is_not(None), SecretVersionRow.valid_until <= now
                    )
                )
                await session.execute(
                    update(SecretVersionRow)
                    .where(
                        *scope,
                        or_(
                            SecretVersionRow.valid_until.is_(None),
                            SecretVersionRow.valid_until > previous_valid_until,
                        ),
                    )
                    .values(valid_until=previous_valid_until)
                )
                session.add(_row(record))
        except IntegrityError as exc:
            raise SecretVersionTaken(f"version {record.version} of {record.name!r} exists already") from exc

    async def delete(self, tenant: str, name: str) -> int:
        """Remove every version of one secret; how many there were."""
        async with self._write(), self._sessions.begin() as session:
            removed = await session.execute(
                delete(SecretVersionRow).where(
                    SecretVersionRow.tenant == tenant, SecretVersionRow.name == name
                )
            )
        return int(getattr(removed, "rowcount", 0) or 0)

    async def reseal(self, record: SecretVersion, sealed: str, key_id: str) -> bool:
        """Replace one version's sealed bytes (a new sealing key); False when the version is gone."""
        async with self._write(), self._sessions.begin() as session:
            changed = await session.execute(
                update(SecretVersionRow)
                .where(
                    SecretVersionRow.tenant == record.tenant,
                    SecretVersionRow.name == record.name,
                    SecretVersionRow.version == record.version,
                    SecretVersionRow.sealed == record.sealed,
                )
                .values(sealed=sealed, key_id=key_id)
            )
        return bool(getattr(changed, "rowcount", 0))


def _row(record: SecretVersion) -> SecretVersionRow:
    return SecretVersionRow(
        tenant=record.tenant,
        name=record.name,
        version=record.version,
        sealed=record.sealed,
        key_id=record.key_id,
        created_at=record.created_at,
        created_by=record.created_by,
        valid_until=record.valid_until,
    )
