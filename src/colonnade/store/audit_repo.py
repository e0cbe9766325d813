"""The audit log's table: batches appended at the chain's tail, read back in order or by filter.

Appending reads the tail and inserts the batch in one write transaction that holds the database's
write lock from its first statement (`BEGIN IMMEDIATE` on SQLite, an advisory lock on PostgreSQL),
so replicas and CLI processes writing at the same time still build one unbroken chain. How a batch
is numbered and sealed is the caller's (`seal`); the store only guarantees it sees the true tail.
Every call appends, so the path is kept short: on the embedded SQLite file batches go through one
direct connection (`SqliteDirect`), as idempotency records do; on PostgreSQL through the engine's
group commit (`GroupCommit`), one statement with the idempotency writes of the same moment, on a
driver connection of its own (SQLAlchemy's pool and statement layer cost about 1.5 ms of CPU per
batch here). Every path locks the chain with the same advisory lock or relies on the primary key
on `seq`, which refuses a second record of one number, so together they still build one chain.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.group_commit import GroupCommit
from colonnade.store.moments import aware
from colonnade.store.sqlite_direct import SqliteDirect
from colonnade.store.tables import AuditRow
from colonnade.store.write_gate import WriteGate

__all__ = ["AUDIT_COLUMNS", "AuditFilter", "AuditStore", "Seal", "StoredAudit"]

AUDIT_COLUMNS = (
    "seq",
    "at",
    "kind",
    "actor",
    "actor_kind",
    "tenant",
    "tool",
    "args_hash",
    "decision",
    "reasons",
    "outcome",
    "code",
    "trace_id",
    "call_id",
    "details",
    "prev_hash",
    "hash",
)
Seal = Callable[[int, str | None, Sequence[dict[str, Any]]], list[dict[str, Any]]]
"""(tail seq, tail hash or None for an empty log, new rows) -> the rows numbered, linked and sealed."""

_TAIL = "SELECT seq, hash FROM audit_records ORDER BY seq DESC LIMIT 1"
_INSERT = (
    f"INSERT INTO audit_records ({', '.join(AUDIT_COLUMNS)})"
    f" VALUES ({', '.join(f'${n}' for n in range(1, len(AUDIT_COLUMNS) + 1))})"
)
_INSERT = (
    f"INSERT INTO audit_records ({', '.join(AUDIT_COLUMNS)})"
    f" VALUES ({', '.join(':' + column for column in AUDIT_COLUMNS)})"
)


@dataclass(frozen=True, slots=True)
class StoredAudit:
    """One audit record as stored: the fields `seal` hashed, and the hash."""

    seq: int
    at: datetime
    kind: str
    actor: str | None
    actor_kind: str | None
    tenant: str | None
    tool: str | None
    args_hash: str | None
    decision: str | None
    reasons: list[str]
    outcome: str | None
    code: str | None
    trace_id: str | None
    call_id: str | None
    details: dict[str, Any]
    prev_hash: str
    hash: str

    def fields(self) -> dict[str, Any]:
        return {column: getattr(self, column) for column in AUDIT_COLUMNS}


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """What `colonnade audit list` narrows by; None means any."""

    tenant: str | None = None
    actor: str | None = None
    tool: str | None = None
    outcome: str | None = None
    kind: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_seq: int | None = None
    """Only records older than this one (a page's cursor: the oldest record of the page before)."""


class AuditStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._write = WriteGate(engine)
        database = engine.url.database or ""
        embedded = engine.dialect.name == "sqlite" and database not in ("", ":memory:")
        self._direct = SqliteDirect(database) if embedded else None
        self._group = GroupCommit.of(engine) if engine.dialect.name == "postgresql" else None

    @property
    def inline(self) -> bool:
        """Whether an append runs in the caller's thread at once when the database is free."""
        return self._direct is not None

    @property
    def grouped(self) -> bool:
        """Whether appends join a group commit of their own (callers need not batch them)."""
        return self._group is not None

    async def append(self, rows: Sequence[dict[str, Any]], seal: Seal) -> list[dict[str, Any]]:
        """Seal `rows` after the current tail and insert them, all in one transaction."""
        async with self._write():
            if self._direct is not None:
                return await self._direct.write(lambda conn: _append_direct(conn, rows, seal))
            if self._group is not None:
                return await self._group.append(rows, seal)
            async with self._engine.begin() as conn:  # in-memory SQLite (tests)
                tail = (await conn.execute(text(_TAIL))).first()
                sealed = seal(*_tail(tail), rows)
                await conn.execute(insert(AuditRow), sealed)
                return sealed

    async def scan(self, after_seq: int = 0, limit: int = 1000) -> list[StoredAudit]:
        """Records with seq > after_seq, in chain order: what verification walks."""
        query = select(AuditRow).where(AuditRow.seq > after_seq).order_by(AuditRow.seq).limit(limit)
        async with self._engine.connect() as conn:
            return [_stored(row) for row in (await conn.execute(query)).mappings()]

    async def query(self, where: AuditFilter, limit: int = 100) -> list[StoredAudit]:
        """The newest `limit` records matching every given filter, oldest first."""
        query = select(AuditRow)
        for column, value in (
            (AuditRow.tenant, where.tenant),
            (AuditRow.actor, where.actor),
            (AuditRow.tool, where.tool),
            (AuditRow.outcome, where.outcome),
            (AuditRow.kind, where.kind),
        ):
            if value is not None:
                query = query.where(column == value)
        if where.since is not None:
            query = query.where(AuditRow.at >= where.since)
        if where.until is not None:
            query = query.where(AuditRow.at < where.until)
        if where.before_seq is not None:
            query = query.where(AuditRow.seq < where.before_seq)
        query = query.order_by(AuditRow.seq.desc()).limit(limit)
        async with self._engine.connect() as conn:
            rows = [_stored(row) for row in (await conn.execute(query)).mappings()]
        return rows[::-1]

    async def drain(self) -> None:
        """Return once the appends already made are written (they may wait in the group commit)."""
        if self._group is not None:
            await self._group.drain()

    async def aclose(self) -> None:
        if self._direct is not None:
            await self._direct.aclose()
        if self._group is not None:
            await self._group.aclose()


def _append_direct(
    conn: sqlite3.Connection, rows: Sequence[dict[str, Any]], seal: Seal
) -> list[dict[str, Any]]:
    sealed = seal(*_tail(conn.execute(_TAIL).fetchone()), rows)
    if len(sealed) == 1:
        conn.execute(_INSERT, _bound(sealed[0]))
    else:
        conn.executemany(_INSERT, [_bound(row) for row in sealed])
    return sealed


def _bound(row: dict[str, Any]) -> dict[str, Any]:
    """A sealed row as `bind_all` would bind it (every row goes through here, so only the date and the
    JSON columns are converted: the others are text or numbers already)."""
    at: datetime = row["at"]
    return row | {
        "at": at.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds"),
        "reasons": _json_text(row["reasons"]),
        "details": _json_text(row["details"]),
    }


_json_text = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
"""`json.dumps(value, separators=(",", ":"), ensure_ascii=False)` without building an encoder per call."""


def _tail(row: Any) -> tuple[int, str | None]:
    return (int(row[0]), str(row[1])) if row is not None else (0, None)


def _stored(row: Any) -> StoredAudit:
    values = {column: row[column] for column in AUDIT_COLUMNS}
    values["at"] = aware(values["at"])
    values["reasons"] = _json(values["reasons"]) or []
    values["details"] = _json(values["details"]) or {}
    return StoredAudit(**values)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
