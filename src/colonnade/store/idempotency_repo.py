"""Idempotency records: which key (in which scope) was used with which input, and its outcome.

A record is `in_flight` while its holder runs the call (with a lease, so a crashed holder's key
is taken over after the lease ends) and `done` once the outcome is stored (until retention ends).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Insert, Select, Table, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import session_factory
from colonnade.store.tables import IdempotencyRow
from colonnade.store.write_gate import WriteGate

__all__ = ["Claim", "ClaimKind", "IdempotencyStore"]

ClaimKind = Literal["claimed", "in_flight", "done", "mismatch"]
_TABLE: Table = IdempotencyRow.__table__  # type: ignore[assignment]


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
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._sessions = session_factory(engine)
        self._write = WriteGate(engine)

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
        """The common case is one INSERT; only a key already present needs a look at its row."""
        now = _now()
        values = {
            "scope": scope,
            "key": key,
            "input_hash": input_hash,
            "state": "in_flight",
            "result": None,
            "lease_until": now + timedelta(seconds=lease_s),
            "expires_at": now + timedelta(seconds=max(retention_s, lease_s)),
            "created_at": now,
        }
        table = _TABLE
        async with self._write(), self._engine.begin() as conn:
            inserted = await conn.execute(_insert_new(conn.dialect.name, table, values))
            if inserted.rowcount:
                return Claim("claimed", input_hash)
            row = (await conn.execute(_select_row(table, scope, key, lock=True))).mappings().first()
            if row is None:  # deleted between the two statements: take it now
                await conn.execute(table.insert().values(**values))
                return Claim("claimed", input_hash)
            if _aware(row["expires_at"]) <= now or (
                row["state"] == "in_flight"
                and _aware(row["lease_until"]) <= now
                and row["input_hash"] == input_hash
            ):  # expired, or its holder died without finishing: start over
                await conn.execute(table.update().where(table.c.id == row["id"]).values(**values))
                return Claim("claimed", input_hash)
            if row["input_hash"] != input_hash:
                return Claim("mismatch", row["input_hash"])
            if row["state"] == "done":
                return Claim("done", row["input_hash"], row["result"])
            return Claim("in_flight", input_hash)

    async def complete(
        self, scope: str, key: str, result: dict[str, Any], *, retention_s: float = 86_400.0
    ) -> None:
        async with self._write(), self._engine.begin() as conn:
            await conn.execute(
                _TABLE.update()
                .where(_TABLE.c.scope == scope, _TABLE.c.key == key)
                .values(state="done", result=result, expires_at=_now() + timedelta(seconds=retention_s))
            )

    async def release(self, scope: str, key: str) -> None:
        async with self._write(), self._sessions.begin() as session:
            await session.execute(
                delete(IdempotencyRow).where(IdempotencyRow.scope == scope, IdempotencyRow.key == key)
            )

    async def purge_expired(self) -> int:
        async with self._write(), self._sessions.begin() as session:
            result = await session.execute(delete(IdempotencyRow).where(IdempotencyRow.expires_at <= _now()))
        return int(getattr(result, "rowcount", 0) or 0)


def _insert_new(dialect: str, table: Table, values: dict[str, Any]) -> Insert:
    """INSERT that does nothing when the (scope, key) exists, on both supported databases."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return insert(table).values(**values).on_conflict_do_nothing(index_elements=["scope", "key"])


def _select_row(table: Table, scope: str, key: str, *, lock: bool) -> Select[Any]:
    query = select(table).where(table.c.scope == scope, table.c.key == key)
    return query.with_for_update() if lock else query
