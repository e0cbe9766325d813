"""The PostgreSQL group commit: claims, outcomes and audit records of concurrent calls share a
statement, each answer waits for its own writes to be committed, one chain holds under concurrent
callers and another writer, and a failing write, a cut connection or a lost answer neither loses
nor doubles anyone else's write. Real PostgreSQL throughout (a private schema per test)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.stages.audit import Audit
from colonnade.calls.stages.idempotency import Idempotency
from colonnade.governance.audit import AuditEvent, AuditLog, AuditUnavailable, EventKind, verify_chain
from colonnade.governance.audit.chain import seal
from colonnade.store import create_store_engine, group_commit, migrate_engine
from colonnade.store.audit_repo import AuditStore
from colonnade.store.group_commit import APPEND_LOCK_KEY, GroupCommit
from colonnade.store.idempotency_repo import IdempotencyStore, new_holder
from colonnade.store.store_errors import StoreUnavailable
from tests.support.databases import schema_connect_args
from tests.support.stage_calls import stage_call
from tests.support.store_faults import cut_connections

pytestmark = pytest.mark.postgres

KEY = b"k" * 32
SCOPE = "chaos|chaos:faults:create_payment|-"


@dataclass
class Database:
    engine: AsyncEngine
    admin: AsyncEngine
    application_name: str  # what this test's sessions are called (to cut them)
    schema: str

    async def sibling(self, application_name: str | None = None) -> AsyncEngine:
        """Another engine on the same schema, as another replica has (its sessions named so, if given)."""
        args = schema_connect_args(self.schema)
        if application_name is not None:
            args["server_settings"]["application_name"] = application_name
        return create_store_engine(self.engine.url.render_as_string(hide_password=False), connect_args=args)


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[Database]:
    schema, name = f"colonnade_test_{uuid.uuid4().hex[:12]}", f"colonnade-group-{uuid.uuid4().hex[:8]}"
    admin = create_store_engine(postgres_url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    args = schema_connect_args(schema)
    args["server_settings"]["application_name"] = name
    engine = create_store_engine(postgres_url, connect_args=args)
    try:
        await migrate_engine(engine)
        yield Database(engine, admin, name, schema)
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text("SET LOCAL lock_timeout = '10s'"))
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


class _Answer:
    """The tool: answers at once, counting its runs (a second run of a key would be a second effect)."""

    def __init__(self) -> None:
        self.runs = 0

    async def __call__(self, call: Call, next: Next) -> CallResult:
        self.runs += 1
        return call.result(CallStatus.SUCCESS, output={"made": call.request.call_id})


def _event(n: int) -> AuditEvent:
    return AuditEvent(EventKind.CALL, actor=f"user:u{n}", tool="acme:crm:get_customer", outcome="success")


def _claim_values(key: str, holder: str) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "scope": SCOPE,
        "key": key,
        "input_hash": "a" * 64,
        "lease_until": now + timedelta(seconds=30),
        "expires_at": now + timedelta(hours=1),
        "now": now,
        "holder": holder,
    }


async def _rows(engine: AsyncEngine, sql: str) -> list[Any]:
    async with engine.connect() as conn:
        return list((await conn.execute(text(sql))).all())


async def test_concurrent_keyed_calls_share_batches_and_keep_one_chain_with_another_writer(
    db: Database,
) -> None:
    """32 keyed calls at once through the audit and idempotency stages, while another replica appends."""
    log = AuditLog(AuditStore(db.engine), KEY)
    store = IdempotencyStore(db.engine)
    tool = _Answer()
    pipeline = Pipeline([Audit(log), Idempotency(store), tool])
    other_engine = await db.sibling()
    other = AuditLog(AuditStore(other_engine), KEY)
    group = GroupCommit.of(db.engine)
    before = group.batches

    async def elsewhere() -> None:
        for n in range(40):
            await other.append(_event(n))

    calls = [stage_call("create_payment", idempotency_key=f"k-{n}", timeout_ms=20_000) for n in range(32)]
    results, _ = await asyncio.gather(asyncio.gather(*(pipeline.run(call) for call in calls)), elsewhere())
    assert [result.status for result in results] == [CallStatus.SUCCESS] * 32
    assert tool.runs == 32
    # 32 calls make 96 writes (claim, outcome, record); shared statements make far fewer batches.
    assert 0 < group.batches - before < 48
    report = await verify_chain(log.store)
    assert report.ok and report.records == 32 + 40
    done = await _rows(db.engine, "SELECT count(*) FROM idempotency_records WHERE state = 'done'")
    assert done[0][0] == 32
    await store.aclose()
    await log.store.aclose()
    await other.store.aclose()
    await other_engine.dispose()


async def test_a_keyed_calls_outcome_and_record_are_committed_before_its_answer(db: Database) -> None:
    log = AuditLog(AuditStore(db.engine), KEY)
    store = IdempotencyStore(db.engine)
    pipeline = Pipeline([Audit(log), Idempotency(store), _Answer()])
    reader = await db.sibling()  # sees only what is committed
    call = stage_call("create_payment", idempotency_key="durable-1", timeout_ms=20_000)
    result = await pipeline.run(call)
    assert result.status is CallStatus.SUCCESS
    # Nothing more may be written after the answer: stop every session of the gateway at once.
    await cut_connections(db.admin, db.application_name)
    record = await _rows(reader, "SELECT state, result FROM idempotency_records WHERE key = 'durable-1'")
    assert record and record[0][0] == "done" and record[0][1]["call_id"] == call.request.call_id
    audit = await _rows(reader, f"SELECT outcome FROM audit_records WHERE call_id = '{call.request.call_id}'")
    assert [row[0] for row in audit] == ["success"]
    await reader.dispose()
    await store.aclose()
    await log.store.aclose()


async def test_a_write_the_database_refuses_fails_alone_in_its_batch(db: Database) -> None:
    """One outcome PostgreSQL refuses (a NUL character in JSON) among claims, outcomes and records."""
    group = GroupCommit.of(db.engine)
    holders = [new_holder() for _ in range(4)]
    for n, holder in enumerate(holders[:2]):
        assert await group.claim(_claim_values(f"held-{n}", holder))
    before = group.batches
    writes: list[Awaitable[Any]] = [
        group.complete(SCOPE, "held-0", holders[0], {"output": "bad \u0000 text"}, datetime.now(UTC)),
        group.complete(SCOPE, "held-1", holders[1], {"output": "fine"}, datetime.now(UTC)),
        group.claim(_claim_values("new-2", holders[2])),
        group.claim(_claim_values("new-3", holders[3])),
        *(group.append([AuditLog(AuditStore(db.engine), KEY).row(_event(n))], seal) for n in range(3)),
    ]
    outcomes = await asyncio.gather(*writes, return_exceptions=True)
    assert isinstance(outcomes[0], asyncpg.PostgresError) and not isinstance(outcomes[0], StoreUnavailable)
    assert outcomes[1:4] == [True, True, True]
    assert all(isinstance(sealed, list) and len(sealed) == 1 for sealed in outcomes[4:])
    assert group.batches - before == 1  # all of them were one batch, tried again one by one
    states = dict(await _rows(db.engine, "SELECT key, state FROM idempotency_records"))
    assert states == {"held-0": "in_flight", "held-1": "done", "new-2": "in_flight", "new-3": "in_flight"}
    report = await verify_chain(AuditStore(db.engine))
    assert report.ok and report.records == 3


async def test_a_batch_whose_answer_was_lost_is_sent_again_without_doubling_anything(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement commits, then its answer is lost (the connection drops): the batch is sent once
    more, and every write in it counts once: claims are still ours, records are not written twice."""
    group = GroupCommit.of(db.engine)
    log = AuditLog(AuditStore(db.engine), KEY)
    await log.append(_event(0))  # the chain has a tail already
    run = GroupCommit._run
    lost: list[int] = []

    async def commit_then_lose_the_answer(self: GroupCommit, conn: Any, pending: Any, audit: Any) -> Any:
        rows = await run(self, conn, pending, audit)
        if not lost:
            lost.append(len(pending))
            raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")
        return rows

    monkeypatch.setattr(GroupCommit, "_run", commit_then_lose_the_answer)
    holders = [new_holder(), new_holder()]
    outcomes = await asyncio.gather(
        group.claim(_claim_values("lost-0", holders[0])),
        group.claim(_claim_values("lost-1", holders[1])),
        log.append(_event(1)),
        log.append(_event(2)),
    )
    assert lost == [4]
    # The claims landed in the lost batch: sent again they find their own records (not "inserted").
    assert outcomes[:2] == [False, False]
    store = IdempotencyStore(db.engine)
    for n, holder in enumerate(holders):
        again = await store.claim(SCOPE, f"lost-{n}", "a" * 64, holder=holder, lease_s=30, retention_s=3600)
        assert again.kind == "claimed"
    report = await verify_chain(log.store)
    assert report.ok and report.records == 3
    await store.aclose()
    await log.store.aclose()


async def test_a_cut_connection_under_a_held_lock_keeps_the_audit_records_flowing(db: Database) -> None:
    """A lock on the idempotency table holds a mixed batch; its session is cut, the batch is sent again
    and still waits; past the lock timeout the audit record goes through alone, once, and the claim is
    told to try again (and lands once the lock is gone)."""
    group = GroupCommit.of(db.engine)
    log = AuditLog(AuditStore(db.engine), KEY)
    holder = new_holder()
    async with db.admin.begin() as lock:
        await lock.execute(text(f'LOCK TABLE "{db.schema}".idempotency_records IN ACCESS EXCLUSIVE MODE'))
        claim = asyncio.create_task(group.claim(_claim_values("locked", holder)))
        record = asyncio.create_task(log.append(_event(1)))
        await asyncio.sleep(0.3)
        assert await cut_connections(db.admin, db.application_name) >= 1
        await asyncio.wait_for(record, timeout=30)  # written apart from the claim
        with pytest.raises(StoreUnavailable):
            await asyncio.wait_for(claim, timeout=30)
    assert await group.claim(_claim_values("locked", holder))
    report = await verify_chain(log.store)
    assert report.ok and report.records == 1
    await log.store.aclose()


async def test_a_chain_tail_taken_by_another_writer_is_read_again(db: Database) -> None:
    """The remembered tail goes stale when another process appends: the next batch reseals, no gap."""
    log = AuditLog(AuditStore(db.engine), KEY)
    other_engine = await db.sibling()
    other = AuditLog(AuditStore(other_engine), KEY)
    for n in range(3):
        await log.append(_event(n))
        await other.append(_event(100 + n))
    report = await verify_chain(log.store)
    assert report.ok and report.records == 6 and report.head_seq == 6
    await log.store.aclose()
    await other.store.aclose()
    await other_engine.dispose()


async def test_a_lone_keyed_call_commits_twice_its_outcome_with_its_record(db: Database) -> None:
    """The claim, then one statement with the outcome and the audit record (the idempotency stage hands
    its outcome to the audit stage): two commits, not three, and both durable before the answer."""
    log = AuditLog(AuditStore(db.engine), KEY)
    store = IdempotencyStore(db.engine)
    pipeline = Pipeline([Audit(log), Idempotency(store), _Answer()])
    group = GroupCommit.of(db.engine)
    await pipeline.run(stage_call("create_payment", idempotency_key="warm", timeout_ms=20_000))
    reader = await db.sibling()  # sees only what is committed
    for n in range(3):
        before = group.batches
        call = stage_call("create_payment", idempotency_key=f"twice-{n}", timeout_ms=20_000)
        assert (await pipeline.run(call)).status is CallStatus.SUCCESS
        assert group.batches - before == 2
        done = await _rows(reader, f"SELECT state FROM idempotency_records WHERE key = 'twice-{n}'")
        audit = await _rows(
            reader, f"SELECT outcome FROM audit_records WHERE call_id = '{call.request.call_id}'"
        )
        assert done == [("done",)] and audit == [("success",)]
    report = await verify_chain(log.store)
    assert report.ok and report.records == 4
    await reader.dispose()
    await store.aclose()
    await log.store.aclose()


class _LockingAnswer(_Answer):
    """The tool, which also locks its key's idempotency record from another session (kept open)."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db
        self.lock: Any = None

    async def __call__(self, call: Call, next: Next) -> CallResult:
        self.lock = await self.db.admin.connect()
        await self.lock.begin()
        key = call.request.constraints.idempotency_key
        await self.lock.execute(
            text(f'SELECT 1 FROM "{self.db.schema}".idempotency_records WHERE key = :key FOR UPDATE'),
            {"key": key},
        )
        return await super().__call__(call, next)


async def test_an_outcome_held_past_the_deadline_is_answered_unrecorded_and_lands_later(db: Database) -> None:
    """The outcome's row is locked elsewhere past the call's deadline: the answer is R-TIMEOUT-UNRECORDED
    (never the success), the record lands apart from it, the outcome once the lock is gone, and a resend
    replays it without running the tool again."""
    log = AuditLog(AuditStore(db.engine), KEY)
    store = IdempotencyStore(db.engine)
    idempotency, tool = Idempotency(store), _LockingAnswer(db)
    audit = Audit(log)
    pipeline = Pipeline([audit, idempotency, tool])
    first = await pipeline.run(stage_call("create_payment", idempotency_key="held", timeout_ms=1_500))
    assert first.status is CallStatus.RETRYABLE_ERROR and first.error is not None
    assert first.error.code == "R-TIMEOUT-UNRECORDED"
    state = await _rows(db.admin, f"SELECT state FROM \"{db.schema}\".idempotency_records WHERE key = 'held'")
    assert state == [("in_flight",)]  # the lock still holds it back
    await tool.lock.rollback()
    await tool.lock.close()
    await idempotency.drain()
    await audit.drain()
    state = await _rows(db.admin, f"SELECT state FROM \"{db.schema}\".idempotency_records WHERE key = 'held'")
    assert state == [("done",)]
    records = await _rows(db.engine, f"SELECT outcome FROM audit_records WHERE call_id = '{first.call_id}'")
    assert records == [("success",)]  # how the call ended, written apart from the held outcome
    again = await Pipeline([audit, idempotency, _Answer()]).run(
        stage_call("create_payment", idempotency_key="held", timeout_ms=20_000)
    )
    assert again.status is CallStatus.SUCCESS and any("replay of" in w for w in again.warnings)
    assert tool.runs == 1
    report = await verify_chain(log.store)
    assert report.ok and report.records == 2
    await store.aclose()
    await log.store.aclose()


async def _chain_lock_waiters(admin: AsyncEngine, *names: str) -> int:
    """How many sessions named one of `names` wait for the audit chain's advisory lock."""
    async with admin.connect() as conn:
        waiting = await conn.execute(
            text(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                " WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name = ANY(:names)"
                " AND l.classid = :high AND l.objid = :low"
            ),
            {"names": list(names), "high": APPEND_LOCK_KEY >> 32, "low": APPEND_LOCK_KEY & 0xFFFFFFFF},
        )
        return int(waiting.scalar_one())


async def _until(condition: Callable[[], Awaitable[bool]], *, within_s: float = 30.0) -> None:
    """Poll the server's state until `condition` holds (a condition, not a guessed sleep)."""
    for _ in range(int(within_s / 0.01)):
        if await condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within {within_s} s")


async def test_a_writer_sealing_from_its_remembered_tail_cannot_overtake_a_locked_writer(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writer A has collided once, so it locks the chain and reads the tail under the lock; writer C
    seals from the tail it read without the lock. A third session holds the lock while both try: C's
    statement must wait for the lock too (before the fix it inserted at once and took the number A was
    about to use, again and again, until A gave up). Released, both land, in one verified chain."""
    monkeypatch.setattr(group_commit, "CONTENDED_S", 3600.0)  # A stays locked for the whole test
    monkeypatch.setattr(group_commit, "LOCK_TIMEOUT_MS", 60_000)  # the held lock never times a writer out
    log_a = AuditLog(AuditStore(db.engine), KEY)
    collider_engine = await db.sibling()
    collider = AuditLog(AuditStore(collider_engine), KEY)
    await log_a.append(_event(1))  # A remembers tail 1
    await collider.append(_event(2))  # the tail moves under A
    await log_a.append(_event(3))  # A collides, reads the tail again, and locks from now on
    await collider.store.aclose()
    await collider_engine.dispose()
    c_name = f"{db.application_name}-c"
    c_engine = await db.sibling(c_name)
    log_c = AuditLog(AuditStore(c_engine), KEY)
    await log_c.append(_event(4))  # C remembers tail 4, which is current: it seals without the lock
    names = (db.application_name, c_name)

    async def waiting(count: int) -> bool:
        return await _chain_lock_waiters(db.admin, *names) >= count

    async with db.admin.connect() as holder:
        await holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": APPEND_LOCK_KEY})
        try:
            a = asyncio.create_task(log_a.append(_event(5)))
            await _until(lambda: waiting(1))  # A waits for the lock, to read the tail under it
            c = asyncio.create_task(log_c.append(_event(6)))
            both_wait = asyncio.create_task(_until(lambda: waiting(2)))
            await asyncio.wait({c, both_wait}, return_when=asyncio.FIRST_COMPLETED)
            assert not c.done(), "C appended while the chain's lock was held: it overtook A"
            await both_wait
        finally:
            await holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": APPEND_LOCK_KEY})
    await asyncio.wait_for(asyncio.gather(a, c), timeout=30)
    report = await verify_chain(log_a.store)
    assert report.ok and report.records == 6 and report.head_seq == 6
    await log_a.store.aclose()
    await log_c.store.aclose()
    await c_engine.dispose()


def _waits_again(caplog: pytest.LogCaptureFixture) -> int:
    return sum("waiting again" in record.getMessage() for record in caplog.records)


async def _one_record_log(
    db: Database, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, *, waits: int
) -> AuditLog:
    """A log with one record, a 100 ms lock timeout, `waits` waits again, and the waits logged."""
    monkeypatch.setattr(group_commit, "LOCK_TIMEOUT_MS", 100)
    monkeypatch.setattr(group_commit, "LOCK_WAITS", waits)
    caplog.set_level("DEBUG", logger="colonnade.store.group_commit")
    log = AuditLog(AuditStore(db.engine), KEY)
    await GroupCommit.of(db.engine).connect()  # the lock timeout is the group connection's, not the pool's
    await log.append(_event(1))
    return log


@contextlib.asynccontextmanager
async def _chain_lock_held(db: Database) -> AsyncIterator[None]:
    """Another session holds the audit chain's advisory lock for the block."""
    async with db.admin.connect() as holder:
        await holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": APPEND_LOCK_KEY})
        try:
            yield
        finally:
            await holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": APPEND_LOCK_KEY})


async def test_audit_records_wait_again_for_a_chain_lock_held_past_the_lock_timeout(
    db: Database, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Another replica's commit holds the chain's lock longer than the lock timeout (a busy disk): the
    record waits again instead of failing, so the log stays writable and no call is refused for it."""
    log = await _one_record_log(db, monkeypatch, caplog, waits=10_000)  # bounded by the release below
    async with _chain_lock_held(db):
        record = asyncio.create_task(log.append(_event(2)))

        async def timed_out_twice() -> bool:
            assert not record.done(), record  # it may not fail (nor land) while the lock is held
            return _waits_again(caplog) >= 2

        await _until(timed_out_twice)
    await asyncio.wait_for(record, timeout=30)
    assert log.writable
    report = await verify_chain(log.store)
    assert report.ok and report.records == 2
    await log.store.aclose()


async def test_audit_records_give_up_after_their_lock_waits(
    db: Database, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The waits are bounded: a lock that is never released fails the record, retryably, and the log
    says it cannot be written (new calls are refused until a record lands)."""
    log = await _one_record_log(db, monkeypatch, caplog, waits=2)
    async with _chain_lock_held(db):
        with pytest.raises(AuditUnavailable):
            await asyncio.wait_for(log.append(_event(2)), timeout=30)
    assert _waits_again(caplog) == 2
    assert not log.writable
    await log.append(_event(3))
    assert log.writable
    await log.store.aclose()
