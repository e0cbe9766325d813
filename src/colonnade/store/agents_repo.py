"""Registered agents: tenant, owner, allow-list of canonical tool names (globs) and public key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.moments import aware
from colonnade.store.tables import AgentRow
from colonnade.store.write_gate import WriteGate

__all__ = ["AgentRecord", "AgentStore"]


@dataclass(frozen=True, slots=True)
class AgentRecord:
    id: str
    tenant: str
    owner: str
    allowed_tools: tuple[str, ...]
    public_key: dict[str, Any] | None
    key_thumbprint: str | None
    registered_via: str
    created_at: datetime
    revoked_at: datetime | None = None


def _record(row: AgentRow) -> AgentRecord:
    return AgentRecord(
        row.id,
        row.tenant,
        row.owner,
        tuple(row.allowed_tools),
        dict(row.public_key) if row.public_key is not None else None,
        row.key_thumbprint,
        row.registered_via,
        aware(row.created_at),
        aware(row.revoked_at),
    )


class AgentStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

    async def add(self, record: AgentRecord) -> bool:
        """Register; False when the id is taken."""
        async with self._write(), self._sessions.begin() as session:
            if await session.get(AgentRow, record.id) is not None:
                return False
            session.add(
                AgentRow(
                    id=record.id,
                    tenant=record.tenant,
                    owner=record.owner,
                    allowed_tools=list(record.allowed_tools),
                    public_key=record.public_key,
                    key_thumbprint=record.key_thumbprint,
                    registered_via=record.registered_via,
                    created_at=record.created_at,
                    revoked_at=None,
                )
            )
        return True

    async def get(self, agent_id: str) -> AgentRecord | None:
        async with self._sessions() as session:
            row = await session.get(AgentRow, agent_id)
            return _record(row) if row is not None else None

    async def list(self, tenant: str | None = None) -> list[AgentRecord]:
        query = select(AgentRow).order_by(AgentRow.id)
        if tenant is not None:
            query = query.where(AgentRow.tenant == tenant)
        async with self._sessions() as session:
            return [_record(row) for row in await session.scalars(query)]

    async def revoke(self, agent_id: str, when: datetime) -> bool:
        async with self._write(), self._sessions.begin() as session:
            changed = await session.execute(
                update(AgentRow)
                .where(AgentRow.id == agent_id, AgentRow.revoked_at.is_(None))
                .values(revoked_at=when)
            )
        return bool(getattr(changed, "rowcount", 0))
