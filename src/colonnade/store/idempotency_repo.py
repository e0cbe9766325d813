"""Idempotency records: which key (in which scope) was used with which input, and its outcome.

A record is `in_flight` while its holder runs the call (with a lease, so a crashed holder's key
is taken over after the lease ends) and `done` once the outcome is stored (until retention ends).

This sits on every keyed call, so it is written for speed: a claim is one INSERT in the common
case; on the embedded SQLite database statements go through one direct autocommit connection
(`SqliteDirect`), on PostgreSQL through the pool with a row lock. The SQL is the same for both.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import DateTime, bindparam, text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.sqlite_direct import SqliteDirect, bind_all, parse_date
from colonnade.store.tables import JSON_DOCUMENT
from colonnade.store.write_gate import WriteGate

__all__ = ["Claim", "ClaimKind", "IdempotencyStore"]

ClaimKind = Literal["claimed", "in_flight", "done", "mismatch"]

_INSERT = (
    "INSERT INTO idempotency_records (scope, key, input_hash, state, lease_until, expires_at, created_at)"
    " VALUES (:scope, :key, :input_hash, 'in_flight', :lease_until, :expires_at, :now)"
    " ON CONFLICT (scope, key) DO NOTHING"
)
_SELECT = (
    "SELECT id, input_hash, state, result, lease_until, expires_at FROM idempotency_records"
    " WHERE scope = :scope AND key = :key"
)
_TAKE_OVER = (
    "UPDATE idempotency_records SET input_hash = :input_hash, state = 'in_flight', result = NULL,"
    " lease_until = :lease_until, expires_at = :expires_at, created_at = :now WHERE id = :id"
)
_COMPLETE = (
    "UPDATE idempotency_records SET state = 'done', result = :result, expires_at = :expires_at"
    " WHERE scope = :scope AND key = :key"
)
_RELEASE = "DELETE FROM idempotency_records WHERE scope = :scope AND key = :key"
_PURGE = "DELETE FROM idempotency_records WHERE expires_at <= :now"
_TYPES = {
    "lease_until": DateTime(timezone=True),
    "expires_at": DateTime(timezone=True),
    "now": DateTime(timezone=True),
    "result": JSON_DOCUMENT,
}


@dataclass(frozen=True, slots=True)
class Claim:
    kind: ClaimKind
    input_hash: str
    result: dict[str, Any] | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def _date(value: Any) -> datetime:
    parsed = parse_date(value) if isinstance(value, str) else value
    assert isinstance(parsed, datetime)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _document(value: Any) -> dict[str, Any] | None:
    loaded = json.loads(value) if isinstance(value, str) else value
    return loaded if isinstance(loaded, dict) else None


class _Pooled:
    """Statements through SQLAlchemy's pool, in one transaction each (PostgreSQL, in-memory SQLite)."""

    def __init__(self, engine: AsyncEngine, lock_rows: bool) -> None:
        self._engine = engine
        self._suffix = " FOR UPDATE" if lock_rows else ""

    @staticmethod
    def _text(sql: str) -> Any:
        params = (bindparam(name, type_=kind) for name, kind in _TYPES.items() if f":{name}" in sql)
        return text(sql).bindparams(*params)

    async def execute(self, sql: str, params: dict[str, Any]) -> int:
        async with self._engine.begin() as conn:
            return int((await conn.execute(self._text(sql), params)).rowcount or 0)

    async def claim(self, values: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        """Insert, or read the existing row under a lock; one transaction."""
        async with self._engine.begin() as conn:
            if (await conn.execute(self._text(_INSERT), values)).rowcount:
                return 1, None
            row = (await conn.execute(self._text(_SELECT + self._suffix), values)).mappings().first()
            if row is not None and _decide(dict(row), values) == "take_over":
                await conn.execute(self._text(_TAKE_OVER), {**values, "id": row["id"]})
                return 1, None
            return 0, dict(row) if row is not None else None


class _Direct:
    """Statements on the embedded SQLite file; a claim is one round trip to its worker thread."""

    def __init__(self, database: str) -> None:
        self._db = SqliteDirect(database)

    async def execute(self, sql: str, params: dict[str, Any]) -> int:
        return await self._db.execute(sql, params)

    async def claim(self, values: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        bound = bind_all(values)

        def work(conn: sqlite3.Connection) -> tuple[int, dict[str, Any] | None]:
            if conn.execute(_INSERT, bound).rowcount:
                return 1, None
            found = conn.execute(_SELECT, bound).fetchone()
            row = dict(found) if found is not None else None
            if row is not None and _decide(row, values) == "take_over":
                conn.execute(_TAKE_OVER, {**bound, "id": row["id"]})
                return 1, None
            return 0, row

        return await self._db.write(work)

    async def aclose(self) -> None:
        await self._db.aclose()


def _decide(row: dict[str, Any], values: dict[str, Any]) -> str:
    """An expired record, or one whose holder died without finishing, is taken over."""
    now = values["now"]
    expired = _date(row["expires_at"]) <= now
    abandoned = row["state"] == "in_flight" and _date(row["lease_until"]) <= now
    return "take_over" if expired or (abandoned and row["input_hash"] == values["input_hash"]) else "keep"


class IdempotencyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._write = WriteGate(engine)
        database = engine.url.database or ""
        embedded = engine.dialect.name == "sqlite" and database not in ("", ":memory:")
        self._db: _Direct | _Pooled = (
            _Direct(database) if embedded else _Pooled(engine, lock_rows=engine.dialect.name == "postgresql")
        )

    async def aclose(self) -> None:
        if isinstance(self._db, _Direct):
            await self._db.aclose()

    async def claim(
        self, scope: str, key: str, input_hash: str, *, lease_s: float, retention_s: float
    ) -> Claim:
        """Take the key for a new execution, or say why not (done, in flight, or other input)."""
        now = _now()
        values = {
            "scope": scope,
            "key": key,
            "input_hash": input_hash,
            "lease_until": now + timedelta(seconds=lease_s),
            "expires_at": now + timedelta(seconds=max(retention_s, lease_s)),
            "now": now,
        }
        async with self._write():
            taken, row = await self._db.claim(values)
        if taken:
            return Claim("claimed", input_hash)
        if row is None:  # deleted between the two statements: try once more from the start
            return await self.claim(scope, key, input_hash, lease_s=lease_s, retention_s=retention_s)
        if row["input_hash"] != input_hash:
            return Claim("mismatch", row["input_hash"])
        if row["state"] == "done":
            return Claim("done", row["input_hash"], _document(row["result"]))
        return Claim("in_flight", input_hash)

    async def complete(
        self, scope: str, key: str, result: dict[str, Any], *, retention_s: float = 86_400.0
    ) -> None:
        expires = _now() + timedelta(seconds=retention_s)
        async with self._write():
            await self._db.execute(
                _COMPLETE, {"scope": scope, "key": key, "result": result, "expires_at": expires}
            )

    async def release(self, scope: str, key: str) -> None:
        async with self._write():
            await self._db.execute(_RELEASE, {"scope": scope, "key": key})

    async def purge_expired(self) -> int:
        async with self._write():
            return await self._db.execute(_PURGE, {"now": _now()})
