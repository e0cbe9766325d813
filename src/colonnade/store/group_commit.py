"""One group commit for every durable per-call write on PostgreSQL: claims, outcomes, releases, audit records.

Through SQLAlchemy's pool, each of a keyed call's three writes paid a checkout with its ping, BEGIN,
the statement, COMMIT and the statement layer around them: about 20 round trips and 3 ms of gateway
CPU per call. Here writes queue, and a flusher writes everything queued as ONE statement
(data-modifying CTEs over `unnest`ed arrays, one prepared statement per combination of kinds) on a
driver connection of its own, in autocommit: one round trip and one commit for the whole batch,
however many calls it carries. Every caller waits for the batch that holds its write, and the
batch is durable (committed with the server's `synchronous_commit`) before anyone is told. The
connection is opened as soon as the group commit is made; batches that come before it is open
(just after start-up) borrow one of the pool's.

The audit chain's tail (number and hash) is remembered from the last batch, so records are sealed
without reading it; the primary key on `seq` refuses a record whose number another writer took
meanwhile (another replica, the CLI), and then the tail is read again and the batch sealed anew.
After such a collision, batches take the chain's advisory lock and read the tail under it for a
while (`CONTENDED_S`), so replicas writing at the same time stop colliding. Every statement that
writes audit records takes that lock too before its first row, so a writer sealing from its
remembered tail cannot slip in between a locked writer's read of the tail and its insert (it
waits, collides, and locks from then on): without that, the faster unlocked writer won every race
and starved the locked one until it gave up.

A statement that fails rolled back as a whole, so nothing in it is half written:
- a connection lost mid-way (a restart, a failover, a cut session) is replaced and the same batch
  sent once more. Every write in it is safe to repeat: claims, outcomes and releases name their
  attempt's holder, and audit records keep their numbers and hashes, so a record found at its
  number with its own hash landed the first time and is not written twice;
- a lock held elsewhere for longer than `LOCK_TIMEOUT_MS` ends the wait, and the audit records
  and the idempotency writes are tried apart, so a lock on one table does not hold the other's;
  audit records alone wait again (`LOCK_WAITS` times): the chain's lock is held by the other
  replicas' commits, and a commit slowed past the timeout (a busy disk) is contention that passes,
  not a database that fails (which would make the log refuse every call until a record lands);
- a write the database refuses (bad data) is found by writing each of the batch alone: the others
  land, and only its caller gets the error.
Failures that may pass reach callers as `StoreUnavailable`, the others as the driver raised them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.engine import driver_connect_args
from colonnade.store.store_errors import StoreUnavailable

__all__ = ["CONTENDED_S", "LOCK_TIMEOUT_MS", "LOCK_WAITS", "MAX_BATCH", "GroupCommit", "Seal"]

logger = logging.getLogger(__name__)

MAX_BATCH = 512
LOCK_TIMEOUT_MS = 1_000
"""How long a batch waits for a lock held elsewhere before its parts are tried apart."""
CONTENDED_S = 2.0
"""After the chain's tail moved under this writer, how long batches lock the chain before writing."""
LOCK_WAITS = 4
"""How many more times a batch of audit records alone waits for a lock after a wait timed out."""
_COLLISIONS = 8  # tails found moved under one batch before its callers are told to try again

Seal = Callable[[int, str | None, Sequence[dict[str, Any]]], list[dict[str, Any]]]
Kind = Literal["claim", "complete", "release", "audit"]

# The same arbitrary constant the audit store's other paths lock: "the audit chain is being extended".
APPEND_LOCK_KEY = 0x617564697431
_CHAIN_LOCK = "chain_lock"
_TAIL = "SELECT seq, hash FROM audit_records ORDER BY seq DESC LIMIT 1"
_HASH_AT = "SELECT hash FROM audit_records WHERE seq = $1"
_AUDIT_COLUMNS = (
    ("seq", "bigint"),
    ("at", "timestamptz"),
    ("kind", "text"),
    ("actor", "text"),
    ("actor_kind", "text"),
    ("tenant", "text"),
    ("tool", "text"),
    ("args_hash", "text"),
    ("decision", "text"),
    ("reasons", "jsonb"),
    ("outcome", "text"),
    ("code", "text"),
    ("trace_id", "text"),
    ("call_id", "text"),
    ("details", "jsonb"),
    ("prev_hash", "text"),
    ("hash", "text"),
)


@dataclass(frozen=True, slots=True)
class _Part:
    """One kind's statement, with `{rows}` where its rows come from, and the types of their columns.

    One row comes as one parameter per column (`VALUES`); several as one array per column
    (`unnest`), which asyncpg encodes at a cost per element: a lone caller's batch is one row.
    JSON columns travel as text and are cast in `sql`.
    """

    name: str
    types: tuple[str, ...]
    sql: str

    def source(self, first: int, single: bool) -> str:
        aliases = ", ".join(f"v{n}" for n in range(len(self.types)))
        if single:
            values = ", ".join(f"${first + n}::{kind}" for n, kind in enumerate(self.types))
            return f"(VALUES ({values})) AS t({aliases})"
        arrays = ", ".join(f"${first + n}::{kind}[]" for n, kind in enumerate(self.types))
        return f"unnest({arrays}) AS t({aliases})"


_TEXT, _MOMENT = "text", "timestamptz"
_CLAIMS = _Part(
    "c",
    (_TEXT, _TEXT, _TEXT, _MOMENT, _MOMENT, _MOMENT, _TEXT),
    "INSERT INTO idempotency_records"
    " (scope, key, input_hash, state, lease_until, expires_at, created_at, holder)"
    " SELECT v0, v1, v2, 'in_flight', v3, v4, v5, v6 FROM {rows}"
    " ON CONFLICT (scope, key) DO NOTHING RETURNING holder",
)
_COMPLETES = _Part(
    "u",
    (_TEXT, _TEXT, _TEXT, _TEXT, _MOMENT),
    "UPDATE idempotency_records AS r SET state = 'done', result = t.v3::jsonb, expires_at = t.v4"
    " FROM {rows} WHERE r.scope = t.v0 AND r.key = t.v1 AND r.holder = t.v2 RETURNING r.holder",
)
_RELEASES = _Part(
    "d",
    (_TEXT, _TEXT, _TEXT),
    "DELETE FROM idempotency_records AS r USING {rows}"
    " WHERE r.scope = t.v0 AND r.key = t.v1 AND r.holder = t.v2 RETURNING r.holder",
)


def _audit_part() -> _Part:
    """Every audit column, JSON ones cast from text."""
    names = ", ".join(name for name, _ in _AUDIT_COLUMNS)
    values = ", ".join(
        f"v{n}::jsonb" if kind == "jsonb" else f"v{n}" for n, (_, kind) in enumerate(_AUDIT_COLUMNS)
    )
    types = tuple(_TEXT if kind == "jsonb" else kind for _, kind in _AUDIT_COLUMNS)
    return _Part("a", types, f"INSERT INTO audit_records ({names}) SELECT {values} FROM {{rows}}")


_AUDIT = _audit_part()
_IDEMPOTENCY_PARTS = {"claim": _CLAIMS, "complete": _COMPLETES, "release": _RELEASES}


@dataclass(eq=False, slots=True)
class _Write:
    """One caller's write: its values (a tuple per array of its kind), or audit rows and their seal."""

    kind: Kind
    future: asyncio.Future[Any]
    values: tuple[Any, ...] = ()
    rows: Sequence[dict[str, Any]] = ()
    seal: Seal | None = None
    sealed: list[dict[str, Any]] | None = None
    holder: str = ""
    done: bool = field(default=False)


@functools.cache
def _statement(shape: tuple[tuple[str, bool], ...]) -> str:
    """The one statement writing a batch of `shape` ((kind, one row?) per kind present, in part order);
    its idempotency parts return (part, holder)."""
    parts = [(_AUDIT if kind == "audit" else _IDEMPOTENCY_PARTS[kind], single) for kind, single in shape]
    # A statement that extends the chain holds the chain's lock before it writes any row (every
    # part's rows join the lock), so a writer reading the tail under that lock is never overtaken
    # by one sealing from a remembered tail: the latter waits, collides, and locks from then on.
    chained = any(part is _AUDIT for part, _ in parts)
    joined = f" CROSS JOIN {_CHAIN_LOCK}" if chained else ""
    placeholder, texts = 1, []
    for part, single in parts:
        texts.append(part.sql.format(rows=part.source(placeholder, single) + joined))
        placeholder += len(part.types)
    lock = f"{_CHAIN_LOCK} AS (SELECT pg_advisory_xact_lock({APPEND_LOCK_KEY}))" if chained else ""
    if len(parts) == 1:  # the statement itself, no other CTE around it (what a lone caller sends)
        part = parts[0][0]
        single_text = texts[0].replace(" RETURNING ", f" RETURNING '{part.name}'::text AS part, ")
        return f"WITH {lock} {single_text}" if chained else single_text
    ctes = ", ".join(
        ([lock] if chained else [])
        + [f"{part.name} AS ({sql})" for (part, _), sql in zip(parts, texts, strict=True)]
    )
    selects = " UNION ALL ".join(
        f"SELECT '{part.name}'::text AS part, holder::text FROM {part.name}"
        for part, _ in parts
        if part is not _AUDIT
    )
    return f"WITH {ctes} {selects}"


def _columns(rows: Sequence[Sequence[Any]], width: int) -> list[Any]:
    """The parameters of `rows`: one row's values as they are, several as one array per column."""
    if len(rows) == 1:
        return list(rows[0])
    columns: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return columns


def _audit_rows(writes: Sequence[_Write]) -> list[tuple[Any, ...]]:
    rows = []
    for write in writes:
        assert write.sealed is not None
        for row in write.sealed:
            rows.append(
                tuple(
                    _json_text(row[name]) if kind == "jsonb" else row[name] for name, kind in _AUDIT_COLUMNS
                )
            )
    return rows


_json_text = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _connection_lost(exc: BaseException) -> bool:
    """The connection is gone (restart, failover, a cut session): the next batch needs a new one."""
    return isinstance(
        exc,
        asyncpg.InterfaceError
        | asyncpg.InternalClientError  # the server ended an idle session: the protocol is out of step
        | asyncpg.PostgresConnectionError
        | asyncpg.exceptions.OperatorInterventionError
        | asyncpg.exceptions.InsufficientResourcesError
        | ConnectionError
        | OSError
        | TimeoutError,
    )


def _waited_too_long(exc: BaseException) -> bool:
    """Refused for waiting on others (a lock, a deadlock): it rolled back, and the connection lives on."""
    return isinstance(
        exc,
        asyncpg.exceptions.LockNotAvailableError
        | asyncpg.exceptions.QueryCanceledError
        | asyncpg.exceptions.TransactionRollbackError,
    )


def _tail_moved(exc: BaseException) -> bool:
    return (
        isinstance(exc, asyncpg.UniqueViolationError) and getattr(exc, "table_name", None) == "audit_records"
    )


class GroupCommit:
    """The group commit of one PostgreSQL engine, shared by every store on it (`of`)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._connect_args = driver_connect_args(engine)
        self._engine = weakref.ref(engine)  # for a pool connection at start-up; the engine owns us, not we it
        self._queue: list[_Write] = []
        self._flusher: asyncio.Task[None] | None = None
        self._conn: asyncpg.Connection | None = None
        self._connecting: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tail: tuple[int, str | None] | None = None  # the chain's tail as of our last batch
        self._contended_until = 0.0
        self.batches = 0
        """Batches taken from the queue (each one statement when all goes well): writes share them."""
        # A disposed engine takes this connection with it (a store that was never closed included).
        event.listen(engine.sync_engine, "engine_disposed", self._on_dispose)

    @classmethod
    def of(cls, engine: AsyncEngine) -> GroupCommit:
        """The engine's group commit (made on first use, and connecting at once when it can)."""
        made = _SHARED.get(engine.sync_engine)
        if made is None:
            made = _SHARED[engine.sync_engine] = cls(engine)
            made.warm()
        return made

    def warm(self) -> None:
        """Start connecting in the background, so the first call does not wait for a connection."""
        with contextlib.suppress(RuntimeError):  # no running loop: the first write connects
            asyncio.get_running_loop()
            self._connecting_task()

    async def connect(self) -> None:
        """Wait until the group's own connection is open: until then batches borrow a pool connection,
        which has no `lock_timeout` (a lock held elsewhere holds them as long as it is held)."""
        await self._connection()

    # -- what callers write ------------------------------------------------------------------------

    async def claim(self, values: dict[str, Any]) -> bool:
        """Insert a new `in_flight` record for `values["holder"]`; False when the key has one already."""
        keys = ("scope", "key", "input_hash", "lease_until", "expires_at", "now", "holder")
        result: bool = await self._submit("claim", tuple(values[k] for k in keys), values["holder"])
        return result

    async def complete(self, scope: str, key: str, holder: str, result: dict[str, Any], expires: Any) -> bool:
        """Record attempt `holder`'s outcome; False when the key is no longer held by it."""
        done: bool = await self._submit("complete", (scope, key, holder, _json_text(result), expires), holder)
        return done

    async def release(self, scope: str, key: str, holder: str) -> bool:
        """Free the key held by attempt `holder`; False when it was not held by it (any more)."""
        freed: bool = await self._submit("release", (scope, key, holder), holder)
        return freed

    async def append(self, rows: Sequence[dict[str, Any]], seal: Seal) -> list[dict[str, Any]]:
        """Seal `rows` after the chain's tail and insert them; returns them as sealed."""
        sealed: list[dict[str, Any]] = await self._enqueue(
            _Write("audit", self._new_future(), rows=rows, seal=seal)
        )
        return sealed

    async def _submit(self, kind: Kind, values: tuple[Any, ...], holder: str) -> Any:
        # A caller that stops waiting cancels its future, not its write: the batch still writes it.
        return await self._enqueue(_Write(kind, self._new_future(), values=values, holder=holder))

    @staticmethod
    def _new_future() -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieve)
        return future

    def _enqueue(self, write: _Write) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        if self._flusher is not None and self._flusher.get_loop() is not loop:
            # An engine used again from a new event loop: the old loop's writers are gone with it.
            self._queue = [queued for queued in self._queue if queued.future.get_loop() is loop]
            self._flusher = None
        self._queue.append(write)
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        return write.future

    async def drain(self) -> None:
        """Return once everything queued so far is written (or has failed)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.wait({self._flusher})

    async def aclose(self) -> None:
        """Write what is queued, then close the connection (the next write opens another)."""
        await self.drain()
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), timeout=5)

    def _on_dispose(self, _engine: object) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            conn.terminate()

    # -- batches ---------------------------------------------------------------------------------

    async def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            self.batches += 1
            try:
                await self._write(batch)
            except BaseException as exc:  # a fault of this code, or shutdown: nobody may wait forever
                _fail(batch, exc if isinstance(exc, Exception) else StoreUnavailable("the writer stopped"))
                if not isinstance(exc, Exception):
                    raise
                logger.exception("a batch of durable writes failed unexpectedly")

    async def _write(self, batch: list[_Write], *, again: bool = False, waits: int = 0) -> None:
        """Write `batch` and tell its callers; on failure, as the module says."""
        try:
            await self._attempt(batch, resend=again)
            return
        except Exception as exc:
            failure: Exception = exc
        self._tail = None
        if _connection_lost(failure):
            self._drop_connection()
            if not again:
                logger.debug(
                    "durable writes: connection lost (%s); sending the batch again", type(failure).__name__
                )
                await self._write(batch, again=True)
                return
        elif _waited_too_long(failure):
            audit = [write for write in batch if write.kind == "audit"]
            rest = [write for write in batch if write.kind != "audit"]
            if audit and rest:
                await self._write(audit, again=again)
                await self._write(rest, again=again)
                return
            if audit and waits < LOCK_WAITS:
                logger.debug("durable writes: audit records waited too long for a lock; waiting again")
                self._contended_until = time.monotonic() + CONTENDED_S
                await self._write(batch, again=again, waits=waits + 1)
                return
        elif len(batch) > 1 and not isinstance(failure, StoreUnavailable):
            for write in batch:  # find the write the database refuses; the others land
                await self._write([write], again=again)
            return
        _fail(batch, _for_callers(failure))

    async def _attempt(self, batch: list[_Write], *, resend: bool) -> None:
        """One statement for the batch (under the chain's lock while contended); raises on failure."""
        async with self._lease() as conn:
            await self._attempt_on(conn, batch, resend=resend)

    @contextlib.asynccontextmanager
    async def _lease(self) -> AsyncIterator[asyncpg.Connection]:
        """The group's connection; while it is still being opened (just after start-up), one of the pool's."""
        engine = self._engine()
        loop = asyncio.get_running_loop()
        opening = self._connecting is not None and not self._connecting.done()
        ready = self._conn is not None and not self._conn.is_closed() and self._loop is loop
        if ready or engine is None or not opening:
            yield await self._connection()
            return
        async with engine.connect() as pooled:
            raw = await pooled.get_raw_connection()
            yield raw.driver_connection

    async def _attempt_on(self, conn: asyncpg.Connection, batch: list[_Write], *, resend: bool) -> None:
        collisions = 0
        while True:
            audit = [write for write in batch if write.kind == "audit" and not write.done]
            pending = [write for write in batch if not write.done]
            if not pending:
                return
            # A batch sent again keeps its numbers first: resealed, it could land twice.
            keep = resend and all(write.sealed is not None for write in audit)
            locked = bool(audit) and not keep and time.monotonic() < self._contended_until
            try:
                if locked:
                    async with conn.transaction():
                        await conn.execute("SELECT pg_advisory_xact_lock($1)", APPEND_LOCK_KEY)
                        self._seal(audit, _tail_of(await conn.fetchrow(_TAIL)))
                        returned = await self._run(conn, pending, audit)
                else:
                    if audit and not keep:
                        if self._tail is None:
                            self._tail = _tail_of(await conn.fetchrow(_TAIL))
                        self._seal(audit, self._tail)
                    returned = await self._run(conn, pending, audit)
            except asyncpg.UniqueViolationError as exc:
                if not _tail_moved(exc):
                    raise
                if resend and await self._landed(conn, audit):
                    for write in audit:  # the lost batch committed them: the rest is safe to repeat
                        write.done = True
                        _settle(write, write.sealed)
                    resend = False
                    continue
                collisions += 1
                resend = False
                self._tail = None
                self._contended_until = time.monotonic() + CONTENDED_S
                if collisions > _COLLISIONS:
                    raise StoreUnavailable("the audit chain's tail kept moving under this writer") from exc
                continue
            self._settle_batch(pending, audit, returned)
            return

    async def _run(self, conn: asyncpg.Connection, pending: list[_Write], audit: list[_Write]) -> list[Any]:
        shape: list[tuple[str, bool]] = []
        args: list[Any] = []
        for kind, part in _IDEMPOTENCY_PARTS.items():
            rows = [write.values for write in pending if write.kind == kind]
            if rows:
                shape.append((kind, len(rows) == 1))
                args.extend(_columns(rows, len(part.types)))
        records = _audit_rows(audit)
        if records:
            shape.append(("audit", len(records) == 1))
            args.extend(_columns(records, len(_AUDIT.types)))
        result: list[Any] = await conn.fetch(_statement(tuple(shape)), *args)
        return result

    def _seal(self, audit: list[_Write], tail: tuple[int, str | None]) -> None:
        seq, last = tail
        for write in audit:
            assert write.seal is not None
            write.sealed = write.seal(seq, last, write.rows)
            if write.sealed:
                seq, last = int(write.sealed[-1]["seq"]), str(write.sealed[-1]["hash"])

    def _settle_batch(self, pending: list[_Write], audit: list[_Write], returned: list[Any]) -> None:
        touched: dict[str, set[str]] = {"c": set(), "u": set(), "d": set()}
        for row in returned:
            touched[row[0]].add(row[1])
        names = {"claim": "c", "complete": "u", "release": "d"}
        for write in pending:
            if write.kind == "audit":
                continue
            _settle(write, write.holder in touched[names[write.kind]])
        for write in audit:
            assert write.sealed is not None
            _settle(write, write.sealed)
            if write.sealed:
                self._tail = (int(write.sealed[-1]["seq"]), str(write.sealed[-1]["hash"]))

    async def _landed(self, conn: asyncpg.Connection, audit: list[_Write]) -> bool:
        """Whether the audit records of a batch whose answer was lost are in the chain, as sealed."""
        first = next((write.sealed[0] for write in audit if write.sealed), None)
        if first is None:
            return False
        return bool(await conn.fetchval(_HASH_AT, first["seq"]) == first["hash"])

    async def _connection(self) -> asyncpg.Connection:
        loop = asyncio.get_running_loop()
        if self._conn is not None and (self._conn.is_closed() or self._loop is not loop):
            self._drop_connection()
        if self._conn is None:
            conn = await asyncio.shield(self._connecting_task())
            if self._conn is None:
                self._conn, self._loop = conn, loop
        return self._conn

    def _connecting_task(self) -> asyncio.Task[Any]:
        """The one connection attempt under way (a warm-up and a first write share it)."""
        loop = asyncio.get_running_loop()
        task = self._connecting
        if task is None or task.done() or task.get_loop() is not loop:
            args = dict(self._connect_args)
            settings = {**args.pop("server_settings", {}), "lock_timeout": f"{LOCK_TIMEOUT_MS}ms"}
            task = self._connecting = loop.create_task(asyncpg.connect(**args, server_settings=settings))
            task.add_done_callback(self._connected)
        return task

    def _connected(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            return  # the write that waits for it is told; a warm-up's failure is only a missed chance
        if self._conn is None:
            self._conn, self._loop = task.result(), task.get_loop()
        elif self._conn is not task.result():
            task.result().terminate()

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            conn.terminate()


_SHARED: weakref.WeakKeyDictionary[object, GroupCommit] = weakref.WeakKeyDictionary()


def _tail_of(row: Any) -> tuple[int, str | None]:
    return (int(row[0]), str(row[1])) if row is not None else (0, None)


def _settle(write: _Write, value: Any) -> None:
    write.done = True
    if not write.future.done():
        write.future.set_result(value)


def _fail(batch: list[_Write], exc: Exception) -> None:
    for write in batch:
        if not write.done and not write.future.done():
            write.done = True
            write.future.set_exception(exc)


def _for_callers(exc: Exception) -> Exception:
    """What a caller is told: a failure that may pass as `StoreUnavailable`, others as they are."""
    if isinstance(exc, StoreUnavailable) or not (_connection_lost(exc) or _waited_too_long(exc)):
        return exc
    unavailable = StoreUnavailable(f"the database did not take the write ({type(exc).__name__})")
    unavailable.__cause__ = exc
    return unavailable


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a failure as seen: a caller that stopped waiting already answered without it."""
    if not future.cancelled():
        future.exception()
