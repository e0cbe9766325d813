"""Idempotency records: which key (in which scope) was used with which input, and its outcome.

A record is `in_flight` while its holder runs the call (with a lease, so a crashed holder's key
is taken over after the lease ends) and `done` once the outcome is stored (until retention ends).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from colonnade.store.engine import session_factory
from colonnade.store.tables import IdempotencyRow

__all__ = ["Claim", "ClaimKind", "IdempotencyStore"]

ClaimKind = Literal["claimed", "in_flight", "done", "mismatch"]


@dataclass(frozen=True, slots=True)
class Claim:
    kind: ClaimKind
    input_hash: str
    result: dict[str, Any] | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class IdempotencyStore:
    def __init__(self, bind: AsyncEngine | async_sessionmaker[AsyncSession]) -> None:
        self._sessions = session_factory(bind) if isinstance(bind, AsyncEngine) else bind

    async def claim(
        self, scope: str, key: str, input_hash: str, *, lease_s: float, retention_s: float
    ) -> Claim:
        """Take the key for a new execution, or say why not (done, in flight, or other input)."""
        for _ in range(3):
            try:
                return await self._claim_once(scope, key, input_hash, lease_s, retention_s)
            except IntegrityError:
                continue  # another writer inserted the key between our read and our insert
        return Claim("in_flight", input_hash)

    async def _claim_once(
        self, scope: str, key: str, input_hash: str, lease_s: float, retention_s: float
    ) -> Claim:
        now = _now()
        async with self._sessions.begin() as session:
            row = await _find(session, scope, key, lock=True)
            if row is not None and _aware(row.expires_at) <= now:
                await session.delete(row)
                await session.flush()
                row = None
            if row is None:
                session.add(
                    IdempotencyRow(
                        scope=scope,
                        key=key,
                        input_hash=input_hash,
                        state="in_flight",
                        result=None,
                        lease_until=now + timedelta(seconds=lease_s),
                        expires_at=now + timedelta(seconds=max(retention_s, lease_s)),
                        created_at=now,
                    )
                )
                return Claim("claimed", input_hash)
            if row.input_hash != input_hash:
                return Claim("mismatch", row.input_hash)
            if row.state == "done":
                return Claim("done", row.input_hash, row.result)
            if _aware(row.lease_until) <= now:  # the holder died without finishing: take over
                row.lease_until = now + timedelta(seconds=lease_s)
                return Claim("claimed", input_hash)
            return Claim("in_flight", input_hash)

    async def complete(
        self, scope: str, key: str, result: dict[str, Any], *, retention_s: float = 86_400.0
    ) -> None:
        now = _now()
        async with self._sessions.begin() as session:
            row = await _find(session, scope, key, lock=True)
            if row is None:
                return
            row.state = "done"
            row.result = result
            row.expires_at = now + timedelta(seconds=retention_s)

    async def release(self, scope: str, key: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                delete(IdempotencyRow).where(IdempotencyRow.scope == scope, IdempotencyRow.key == key)
            )

    async def purge_expired(self) -> int:
        async with self._sessions.begin() as session:
            result = await session.execute(delete(IdempotencyRow).where(IdempotencyRow.expires_at <= _now()))
        return int(getattr(result, "rowcount", 0) or 0)


async def _find(session: AsyncSession, scope: str, key: str, *, lock: bool) -> IdempotencyRow | None:
    query = select(IdempotencyRow).where(IdempotencyRow.scope == scope, IdempotencyRow.key == key)
    if lock:
        query = query.with_for_update()
    return (await session.scalars(query)).first()
