"""A direct SQLite connection for small, hot writes on the embedded database (idempotency records).

On the call path every microsecond counts, and SQLAlchemy's async adapter pays several thread
round trips per statement (cursor, execute, fetch, begin, commit), each a thread wake-up.
A small write to a local WAL database with `synchronous=NORMAL` takes about 10 µs of CPU, so
it runs on the caller's thread inside `BEGIN IMMEDIATE`, which fails at once (`busy_timeout`
0) when another connection holds the write lock; only then does the unit of work move to a
worker thread that waits for the lock (and so do the writes after it, until the worker is done
with the connection). A failure other than a busy lock closes the connection, so the next write
starts on a fresh one.

The write-ahead log must stay bounded. Checkpoints, the one slow part of WAL writes (an fsync),
are taken off this connection (`wal_autocheckpoint=0`) and run on the worker thread from a
connection of their own: every `CHECKPOINT_EVERY` writes a PASSIVE one, which never blocks a
writer. Under continuous traffic a PASSIVE checkpoint never catches up with the writers, the log
never restarts and grows by every write (about 20 KB per keyed call), so once the log holds more
than `WAL_RESTART_BYTES` the checkpoint goes on as a RESTART one: meanwhile writes queue on the
worker behind it (racing it for the write lock from the event loop, they would starve it while
the log keeps growing), it copies the log in a few milliseconds, and the next write starts the log
from its beginning. Should the log file pass `WAL_LIMIT_BYTES` anyway (big writes such as a
purge, a slow disk), writes queue behind a RESTART checkpoint at once; a log file that grew larger
(a long reader kept it from restarting) is cut back to that size (`journal_size_limit`) when it
restarts. After `IDLE_S`
without writes a TRUNCATE checkpoint empties the log file.

Callers serialize their use (see `WriteGate`). Values are stored exactly as SQLAlchemy stores
them (dates as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC, JSON as text), so rows written here and
through the ORM are interchangeable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

__all__ = [
    "CHECKPOINT_EVERY",
    "IDLE_S",
    "WAL_LIMIT_BYTES",
    "WAL_RESTART_BYTES",
    "SqliteDirect",
    "bind_all",
    "parse_date",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
CHECKPOINT_EVERY = 500
_SIZE_CHECK_EVERY = 8  # while a checkpoint runs, how often the log file's size is looked at
WAL_RESTART_BYTES = 8 * 1024 * 1024
WAL_LIMIT_BYTES = 16 * 1024 * 1024
IDLE_S = 2.0
_PATIENCE_MS = 5_000
_CHECKPOINT_PATIENCE_MS = 2_000
_DATE_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
CheckpointMode = Literal["PASSIVE", "RESTART", "TRUNCATE"]


def _bind(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime(_DATE_FORMAT)
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value


def bind_all(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _bind(value) for name, value in params.items()}


def parse_date(value: str) -> datetime:
    return datetime.strptime(value, _DATE_FORMAT).replace(tzinfo=UTC)


def _immediate(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T], transaction: bool) -> T:
    """`work` in a write transaction that takes the write lock first, so nothing is half done when busy.

    `transaction=False` is for one statement, which SQLite runs atomically by itself (in
    autocommit mode): two round trips fewer, and just as safe to try again when busy. (A plain
    function, not a context manager: every call's audit record comes through here.)
    """
    if not transaction:
        return work(conn)
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


def _busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


class SqliteDirect:
    def __init__(self, database: str | Path) -> None:
        self.database = str(database)
        self._wal = self.database + "-wal"
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="colonnade-sqlite")
        self._conn: sqlite3.Connection | None = None
        self._checkpointer: sqlite3.Connection | None = None  # used on the worker thread only
        self._writes = 0
        self._checkpointing = False
        self._last_write = 0.0
        self._idle: asyncio.TimerHandle | None = None
        self._dirty = False  # written since the last TRUNCATE checkpoint
        # Writes queued on or running on the worker. While there are any, the connection is the
        # worker's: a caller that stopped waiting (cancelled) must not make the next write touch it
        # from the event loop's thread at the same time.
        self._on_worker = 0
        self._hold_writes = False  # while a blocking checkpoint runs (or is due), writes queue behind it
        self._frame_bytes = 4096 + 24  # a WAL frame: one page and its header (page size read later)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.database, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            conn.execute("PRAGMA busy_timeout=0")
            self._conn = conn
        return self._conn

    def _drop_connection(self) -> None:
        """Close a connection that failed, so the next write opens a fresh one."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    async def write(self, work: Callable[[sqlite3.Connection], T], *, transaction: bool = True) -> T:
        """Run `work(connection)` in one write transaction: here if the lock is free, else on the worker.

        Without `transaction`, `work` must run a single statement (atomic by itself).
        """
        if self._on_worker or self._hold_writes:  # the worker has the connection, or a checkpoint runs
            result = await self._patiently_on_worker(work, transaction)
        else:
            try:
                result = _immediate(self._connection(), work, transaction)
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    self._drop_connection()
                    raise
                if self._conn is not None and self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                result = await self._patiently_on_worker(work, transaction)
            except sqlite3.Error:
                self._drop_connection()
                raise
        self._wrote()
        return result

    async def _patiently_on_worker(self, work: Callable[[sqlite3.Connection], T], transaction: bool) -> T:
        loop = asyncio.get_running_loop()
        self._on_worker += 1  # counted on the loop's thread only, so no lock is needed

        def finished(_: object) -> None:  # on the worker thread, once it let go of the connection
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody counts any more
                loop.call_soon_threadsafe(self._worker_done)

        job = self._executor.submit(self._patiently, work, transaction)
        job.add_done_callback(finished)
        return await asyncio.wrap_future(job)

    def _worker_done(self) -> None:
        self._on_worker -= 1

    def _patiently(self, work: Callable[[sqlite3.Connection], T], transaction: bool) -> T:
        """On the worker: wait for the write lock (up to `_PATIENCE_MS`), then write."""
        conn = self._connection()
        conn.execute(f"PRAGMA busy_timeout={_PATIENCE_MS}")
        try:
            return _immediate(conn, work, transaction)
        except sqlite3.Error:
            self._drop_connection()
            raise
        finally:
            if self._conn is conn:
                conn.execute("PRAGMA busy_timeout=0")

    def _wrote(self) -> None:
        """After each write: a checkpoint every CHECKPOINT_EVERY writes, one at once past the size
        limit, and one when writes stop."""
        self._writes += 1
        self._dirty = True
        self._last_write = time.monotonic()
        loop = asyncio.get_running_loop()
        if self._idle is None:
            self._idle = loop.call_later(IDLE_S, self._when_idle)
        if self._writes % _SIZE_CHECK_EVERY == 0 and self.wal_bytes() > WAL_LIMIT_BYTES:
            # Big writes (a purge) or a slow checkpoint must not let the log run away: past the
            # limit, writes wait for a checkpoint that restarts it.
            self._hold_writes = True
            if not self._checkpointing:
                self._start_checkpoint("RESTART")
        elif self._writes % CHECKPOINT_EVERY == 0 and not self._checkpointing:
            self._start_checkpoint("PASSIVE")

    def _when_idle(self) -> None:
        idle_for = time.monotonic() - self._last_write
        if idle_for < IDLE_S:
            self._idle = asyncio.get_running_loop().call_later(IDLE_S - idle_for, self._when_idle)
            return
        self._idle = None
        if self._dirty and not self._checkpointing:
            self._dirty = False
            self._start_checkpoint("TRUNCATE")

    def _start_checkpoint(self, mode: CheckpointMode) -> None:
        self._checkpointing = True
        done = asyncio.get_running_loop().run_in_executor(self._executor, self._checkpoint, mode)
        done.add_done_callback(self._checkpoint_done)

    def _checkpoint_done(self, done: asyncio.Future[bool]) -> None:
        self._checkpointing = False
        self._hold_writes = False
        if not done.cancelled() and done.exception() is not None:
            logger.warning("checkpoint of %s failed: %s", self.database, done.exception())

    def wal_bytes(self) -> int:
        """The size of the write-ahead log file (0 when there is none)."""
        try:
            return os.stat(self._wal).st_size
        except FileNotFoundError:
            return 0

    def _checkpoint(self, mode: CheckpointMode) -> bool:
        """On the worker: fold the WAL into the database from a connection of its own.

        A PASSIVE checkpoint that leaves more than WAL_RESTART_BYTES of log goes on as RESTART.
        True when the checkpoint caught up with the log.
        """
        if self._checkpointer is None:
            conn = sqlite3.connect(self.database, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={_CHECKPOINT_PATIENCE_MS}")
            conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            self._frame_bytes = int(conn.execute("PRAGMA page_size").fetchone()[0]) + 24
            self._checkpointer = conn
        try:
            if mode == "PASSIVE":
                busy, frames, _ = self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if frames * self._frame_bytes <= WAL_RESTART_BYTES:
                    return not busy
                mode = "RESTART"
            self._hold_writes = True
            try:
                busy, _, _ = self._checkpointer.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            finally:
                self._hold_writes = False
        except sqlite3.Error:
            self._checkpointer.close()
            self._checkpointer = None
            raise
        return not busy

    async def execute(self, sql: str, params: Mapping[str, Any]) -> int:
        """One statement with named `:params`; returns the number of rows changed."""
        bound = bind_all(params)
        return await self.write(lambda conn: conn.execute(sql, bound).rowcount, transaction=False)

    async def aclose(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        loop = asyncio.get_running_loop()
        with contextlib.suppress(sqlite3.Error):
            await loop.run_in_executor(self._executor, self._checkpoint, "TRUNCATE")
        if self._checkpointer is not None:
            checkpointer, self._checkpointer = self._checkpointer, None
            await loop.run_in_executor(self._executor, checkpointer.close)
        self._executor.shutdown(wait=True)
        self._drop_connection()
