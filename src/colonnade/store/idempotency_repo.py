"""Idempotency records: which key (in which scope) was used with which input, and its outcome.

A record is `in_flight` while an attempt holds the key, under a lease, and `done` once the
outcome is stored (until retention ends). Every attempt writes its own `holder` token and names
it when it completes or releases the key, so the write of an attempt whose key was taken over
meanwhile changes nothing, and repeating a write whose answer was lost (a connection cut right
after the commit) is harmless.

An `in_flight` record whose lease has ended is *in doubt*: an attempt started and never recorded
its outcome (its process died, or the database was away when it tried), so nobody knows whether
it took effect. It is taken over only when the caller says that running the call again is safe;
otherwise the claim reports it as `in_doubt` and leaves it alone.

This sits on every keyed call, so it is written for speed: a claim is one INSERT in the common
case; on the embedded SQLite database statements go through one direct autocommit connection
(`SqliteDirect`); on PostgreSQL claims, outcomes and releases join the engine's group commit
(`GroupCommit`: one statement per batch with the audit records of the same moment), and only a
claim that finds its key taken reads it, through the pool with a row lock.
Database failures that may pass (a lost connection, a lock, an exhausted pool) are raised as
`StoreUnavailable`; everything else propagates unchanged.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import sqlite3
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar

from sqlalchemy import DateTime, bindparam, text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.group_commit import GroupCommit
from colonnade.store.sqlite_direct import SqliteDirect, bind_all, parse_date
from colonnade.store.store_errors import StoreUnavailable, is_transient
from colonnade.store.tables import JSON_DOCUMENT
from colonnade.store.write_gate import WriteGate

__all__ = ["PURGE_BATCH", "Claim", "ClaimKind", "IdempotencyStore", "held_here", "new_holder"]

T = TypeVar("T")
ClaimKind = Literal["claimed", "in_flight", "in_doubt", "done", "mismatch"]
PURGE_BATCH = 1_000

_COLUMNS = "id, input_hash, state, result, lease_until, expires_at, holder"
_INSERT = (
    "INSERT INTO idempotency_records"
    " (scope, key, input_hash, state, lease_until, expires_at, created_at, holder)"
    " VALUES (:scope, :key, :input_hash, 'in_flight', :lease_until, :expires_at, :now, :holder)"
    " ON CONFLICT (scope, key) DO NOTHING"
)
_SELECT = f"SELECT {_COLUMNS} FROM idempotency_records WHERE scope = :scope AND key = :key"
_TAKE_OVER = (
    "UPDATE idempotency_records SET input_hash = :input_hash, state = 'in_flight', result = NULL,"
    " lease_until = :lease_until, expires_at = :expires_at, created_at = :now, holder = :holder"
    " WHERE id = :id"
)
_COMPLETE = (
    "UPDATE idempotency_records SET state = 'done', result = :result, expires_at = :expires_at"
    " WHERE scope = :scope AND key = :key AND holder = :holder"
)
_RELEASE = "DELETE FROM idempotency_records WHERE scope = :scope AND key = :key AND holder = :holder"
# In batches: one huge DELETE would hold SQLite's write lock (and grow its log) for its whole length.
_PURGE = (
    "DELETE FROM idempotency_records WHERE id IN"
    " (SELECT id FROM idempotency_records WHERE expires_at <= :now LIMIT :batch)"
)
_TYPES = {
    "lease_until": DateTime(timezone=True),
    "expires_at": DateTime(timezone=True),
    "now": DateTime(timezone=True),
    "result": JSON_DOCUMENT,
}

# Holder tokens: this process's random prefix, then a counter (cheaper than a uuid per call).
_PROCESS = secrets.token_hex(8)
_ATTEMPTS = itertools.count(1)


def new_holder() -> str:
    """A token for one attempt at a key, unique across processes and restarts."""
    return f"{_PROCESS}.{next(_ATTEMPTS)}"


def held_here(holder: str | None) -> bool:
    """Whether an attempt of this process wrote `holder`."""
    return holder is not None and holder.startswith(_PROCESS + ".")


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer to a claim: the key is ours (`claimed`), or why not.

    `holder` is the attempt holding the key (ours when claimed); `lease_left_s` says how long an
    `in_flight` holder's lease still runs; `taken_over` marks a claim of a key that was in doubt.
    """

    kind: ClaimKind
    input_hash: str
    holder: str | None = None
    result: dict[str, Any] | None = None
    lease_left_s: float = 0.0
    taken_over: bool = False


def _now() -> datetime:
    return datetime.now(UTC)


def _date(value: Any) -> datetime:
    parsed = parse_date(value) if isinstance(value, str) else value
    assert isinstance(parsed, datetime)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _document(value: Any) -> dict[str, Any] | None:
    loaded = json.loads(value) if isinstance(value, str) else value
    return loaded if isinstance(loaded, dict) else None


Decision = Literal["mine", "take_over", "keep"]


def _decide(row: dict[str, Any], values: dict[str, Any], take_over_in_doubt: bool) -> Decision:
    """Ours already (a retried claim whose first answer was lost), to take over, or to leave alone.

    A record past its retention is dead and taken over; one in doubt only when the caller allows.
    """
    if row["holder"] is not None and row["holder"] == values["holder"]:
        return "mine"
    now = values["now"]
    if _date(row["expires_at"]) <= now:
        return "take_over"
    in_doubt = row["state"] == "in_flight" and _date(row["lease_until"]) <= now
    same_input = row["input_hash"] == values["input_hash"]
    return "take_over" if in_doubt and same_input and take_over_in_doubt else "keep"


# What one claim did: inserted, found its own record, took one over, or kept what is there.
Outcome = Literal["inserted", "mine", "taken_over", "kept"]


class _Pooled:
    """Statements through SQLAlchemy's pool, in one transaction each (PostgreSQL, in-memory SQLite).

    A caller may stop waiting (a deadline, a cancelled call), but a statement is never cut off
    half way: the driver's connection would go back to the pool in the middle of an operation
    and fail whoever uses it next. Each transaction runs in a task of its own and finishes.
    """

    def __init__(self, engine: AsyncEngine, lock_rows: bool) -> None:
        self._engine = engine
        self._suffix = " FOR UPDATE" if lock_rows else ""

    @staticmethod
    def _text(sql: str) -> Any:
        params = (bindparam(name, type_=kind) for name, kind in _TYPES.items() if f":{name}" in sql)
        return text(sql).bindparams(*params)

    async def execute(self, sql: str, params: dict[str, Any]) -> int:
        return await _uncancelled(self._execute(sql, params))

    async def complete(self, params: dict[str, Any]) -> int:
        return await self.execute(_COMPLETE, params)

    async def release(self, params: dict[str, Any]) -> int:
        return await self.execute(_RELEASE, params)

    async def _execute(self, sql: str, params: dict[str, Any]) -> int:
        async with self._engine.begin() as conn:
            return int((await conn.execute(self._text(sql), params)).rowcount or 0)

    async def claim(
        self, values: dict[str, Any], take_over_in_doubt: bool
    ) -> tuple[Outcome, dict[str, Any] | None]:
        return await _uncancelled(self._claim(values, take_over_in_doubt))

    async def _claim(
        self, values: dict[str, Any], take_over_in_doubt: bool
    ) -> tuple[Outcome, dict[str, Any] | None]:
        """Insert, or read the existing row under a lock (and maybe take it over); one transaction."""
        async with self._engine.begin() as conn:
            if (await conn.execute(self._text(_INSERT), values)).rowcount:
                return "inserted", None
            found = (await conn.execute(self._text(_SELECT + self._suffix), values)).mappings().first()
            row = dict(found) if found is not None else None
            if row is None:
                return "kept", None
            decision = _decide(row, values, take_over_in_doubt)
            if decision == "take_over":
                await conn.execute(self._text(_TAKE_OVER), {**values, "id": row["id"]})
                return "taken_over", row
            return ("mine" if decision == "mine" else "kept"), row


class _Direct:
    """Statements on the embedded SQLite file through one direct connection (`SqliteDirect`)."""

    def __init__(self, database: str) -> None:
        self._db = SqliteDirect(database)

    async def execute(self, sql: str, params: dict[str, Any]) -> int:
        return await self._db.execute(sql, params)

    async def complete(self, params: dict[str, Any]) -> int:
        return await self._db.execute(_COMPLETE, params)

    async def release(self, params: dict[str, Any]) -> int:
        return await self._db.execute(_RELEASE, params)

    async def claim(
        self, values: dict[str, Any], take_over_in_doubt: bool
    ) -> tuple[Outcome, dict[str, Any] | None]:
        bound = bind_all(values)
        # The common case, a new key, is the INSERT alone; only a key already there needs the
        # transaction that reads it (and maybe takes it over).
        if await self._db.write(lambda conn: conn.execute(_INSERT, bound).rowcount, transaction=False):
            return "inserted", None

        def work(conn: sqlite3.Connection) -> tuple[Outcome, dict[str, Any] | None]:
            found = conn.execute(_SELECT, bound).fetchone()
            row = dict(found) if found is not None else None
            if row is None:
                return "kept", None
            decision = _decide(row, values, take_over_in_doubt)
            if decision == "take_over":
                conn.execute(_TAKE_OVER, {**bound, "id": row["id"]})
                return "taken_over", row
            return ("mine" if decision == "mine" else "kept"), row

        return await self._db.write(work)

    async def aclose(self) -> None:
        await self._db.aclose()


class _Grouped:
    """PostgreSQL: new claims, outcomes and releases in the group commit; a taken key through the pool."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._group = GroupCommit.of(engine)
        self._pooled = _Pooled(engine, lock_rows=True)

    async def execute(self, sql: str, params: dict[str, Any]) -> int:
        return await self._pooled.execute(sql, params)

    async def complete(self, params: dict[str, Any]) -> int:
        done = await self._group.complete(
            params["scope"], params["key"], params["holder"], params["result"], params["expires_at"]
        )
        return int(done)

    async def release(self, params: dict[str, Any]) -> int:
        return int(await self._group.release(params["scope"], params["key"], params["holder"]))

    async def claim(
        self, values: dict[str, Any], take_over_in_doubt: bool
    ) -> tuple[Outcome, dict[str, Any] | None]:
        if await self._group.claim(values):
            return "inserted", None
        return await self._pooled.claim(values, take_over_in_doubt)

    async def aclose(self) -> None:
        await self._group.aclose()


class IdempotencyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._write = WriteGate(engine)
        database = engine.url.database or ""
        embedded = engine.dialect.name == "sqlite" and database not in ("", ":memory:")
        self._db: _Direct | _Pooled | _Grouped
        if embedded:
            self._db = _Direct(database)
        elif engine.dialect.name == "postgresql":
            self._db = _Grouped(engine)
        else:
            self._db = _Pooled(engine, lock_rows=False)

    async def aclose(self) -> None:
        if not isinstance(self._db, _Pooled):
            await self._db.aclose()

    async def claim(
        self,
        scope: str,
        key: str,
        input_hash: str,
        *,
        holder: str,
        lease_s: float,
        retention_s: float,
        take_over_in_doubt: bool = False,
    ) -> Claim:
        """Take the key for attempt `holder`, or say why not (done, in flight, in doubt, other input).

        Claiming again with the same `holder` is safe: a claim that landed is recognised as ours.
        """
        while True:
            now = _now()
            values = {
                "scope": scope,
                "key": key,
                "input_hash": input_hash,
                "lease_until": now + timedelta(seconds=lease_s),
                "expires_at": now + timedelta(seconds=max(retention_s, lease_s)),
                "now": now,
                "holder": holder,
            }
            async with self._write():
                outcome, row = await _guarded(self._db.claim(values, take_over_in_doubt))
            if outcome in ("inserted", "mine"):
                return Claim("claimed", input_hash, holder)
            if outcome == "taken_over":
                assert row is not None
                was_in_doubt = row["state"] == "in_flight" and _date(row["expires_at"]) > now
                return Claim("claimed", input_hash, holder, taken_over=was_in_doubt)
            if row is not None:  # else: deleted between the two statements; try again from the start
                return _refusal(row, input_hash, now)

    async def complete(
        self, scope: str, key: str, holder: str, result: dict[str, Any], *, retention_s: float = 86_400.0
    ) -> bool:
        """Store the outcome of attempt `holder`; False when the key is no longer held by it."""
        expires = _now() + timedelta(seconds=retention_s)
        params = {"scope": scope, "key": key, "holder": holder, "result": result, "expires_at": expires}
        async with self._write():
            return await _guarded(self._db.complete(params)) > 0

    async def release(self, scope: str, key: str, holder: str) -> None:
        """Free the key held by attempt `holder`, so the next call with it runs (a no-op once gone)."""
        async with self._write():
            await _guarded(self._db.release({"scope": scope, "key": key, "holder": holder}))

    async def purge_expired(self, *, batch: int = PURGE_BATCH) -> int:
        """Delete records past their retention, `batch` rows per transaction; returns how many."""
        purged = 0
        while True:
            async with self._write():
                deleted = await _guarded(self._db.execute(_PURGE, {"now": _now(), "batch": batch}))
            purged += deleted
            if deleted < batch:
                return purged
            await asyncio.sleep(0)  # let calls write between batches


def _refusal(row: dict[str, Any], input_hash: str, now: datetime) -> Claim:
    if row["input_hash"] != input_hash:
        return Claim("mismatch", row["input_hash"], row["holder"])
    if row["state"] == "done":
        return Claim("done", input_hash, row["holder"], _document(row["result"]))
    lease_left = (_date(row["lease_until"]) - now).total_seconds()
    if lease_left > 0:
        return Claim("in_flight", input_hash, row["holder"], lease_left_s=lease_left)
    return Claim("in_doubt", input_hash, row["holder"])


async def _uncancelled(work: Coroutine[Any, Any, T]) -> T:
    """`work` in a task that runs to its end even if the caller stops waiting for it."""
    task = asyncio.ensure_future(work)
    task.add_done_callback(_retrieve)
    return await asyncio.shield(task)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark an abandoned task's failure as seen: its caller already answered without it."""
    if not task.cancelled():
        task.exception()


async def _guarded(work: Awaitable[T]) -> T:
    """`work`'s result; a database failure that may pass becomes `StoreUnavailable`."""
    try:
        return await work
    except StoreUnavailable:
        raise
    except Exception as exc:
        if is_transient(exc):
            raise StoreUnavailable(f"the idempotency store did not answer ({type(exc).__name__})") from exc
        raise
