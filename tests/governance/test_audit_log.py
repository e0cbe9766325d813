"""The audit log on SQLite and PostgreSQL: durable appends, one unbroken chain across writers,
group commit, fail-closed when the database is gone, tampering found, nothing secret in clear."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.governance.audit import AuditEvent, AuditLog, AuditUnavailable, EventKind, verify_chain
from colonnade.governance.audit.chain import record_hash
from colonnade.governance.audit.readers import AuditReach, chain_report, read_records
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.audit_repo import AuditFilter, AuditStore
from colonnade.store.group_commit import GroupCommit

KEY = b"k" * 32


def _event(n: int, **fields: Any) -> AuditEvent:
    values: dict[str, Any] = {"actor": f"user:u{n % 3}", "tenant": "acme", "tool": f"acme:crm:t{n}"}
    values.update(fields)
    return AuditEvent(EventKind.CALL, outcome="success", **values)


async def test_appended_events_are_stored_in_one_verified_chain(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    for n in range(5):
        await log.append(_event(n))
    report = await verify_chain(log.store)
    assert report.ok and report.records == 5 and report.head_seq == 5
    rows = await log.store.query(AuditFilter(tenant="acme"))
    assert [row.seq for row in rows] == [1, 2, 3, 4, 5]
    assert rows[1].prev_hash == rows[0].hash
    assert [row.tool for row in await log.store.query(AuditFilter(actor="user:u1"))] == [
        "acme:crm:t1",
        "acme:crm:t4",
    ]
    await log.store.aclose()


async def test_a_reader_reads_only_within_its_reach_whatever_its_filter_names(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    for n, tenant in enumerate(("acme", "globex", "acme")):
        await log.append(_event(n, tenant=tenant))
    asks_for_globex = AuditFilter(tenant="globex")
    acme = await read_records(log, AuditReach("acme"), asks_for_globex, 10)
    assert [(row.seq, row.tenant) for row in acme] == [(1, "acme"), (3, "acme")]
    everything = await read_records(log, AuditReach(None), AuditFilter(), 2)
    assert [row.seq for row in everything] == [2, 3]
    assert (await chain_report(log)).records == 3
    await log.store.aclose()


@pytest.mark.parametrize(
    ("tamper", "broken_at", "problem"),
    [
        ("UPDATE audit_records SET tool = 'acme:crm:other' WHERE seq = 3", 3, "changed"),
        ("UPDATE audit_records SET outcome = 'terminal_error' WHERE seq = 5", 5, "changed"),
        ("DELETE FROM audit_records WHERE seq = 2", 2, "missing"),
        ("UPDATE audit_records SET seq = 7 WHERE seq = 6", 6, "missing"),
    ],
)
async def test_a_change_or_a_gap_is_found(
    engine: AsyncEngine, tamper: str, broken_at: int, problem: str
) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    for n in range(6):
        await log.append(_event(n))
    assert (await verify_chain(log.store)).ok
    async with engine.begin() as conn:
        await conn.execute(text(tamper))
    report = await verify_chain(log.store)
    assert report.broken is not None
    assert report.broken.seq == broken_at and problem in report.broken.problem
    await log.store.aclose()


async def test_a_forged_record_resealed_by_hand_still_breaks_the_next_link(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    for n in range(3):
        await log.append(_event(n))
    rows = await log.store.scan()
    forged = {**rows[1].fields(), "tool": "acme:crm:innocent"}
    forged["hash"] = record_hash(forged)
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE audit_records SET tool = :tool, hash = :hash WHERE seq = 2"),
            {"tool": forged["tool"], "hash": forged["hash"]},
        )
    report = await verify_chain(log.store)
    assert report.broken is not None and report.broken.seq == 3
    await log.store.aclose()


async def test_replicas_appending_at_once_build_one_chain(
    engine: AsyncEngine, sibling_engine: Callable[[], Awaitable[AsyncEngine]]
) -> None:
    logs = [AuditLog(AuditStore(engine), KEY), AuditLog(AuditStore(await sibling_engine()), KEY)]

    async def writer(log: AuditLog, offset: int) -> None:
        for n in range(25):
            await log.append(_event(offset + n))

    await asyncio.gather(*(writer(log, 100 * i) for i, log in enumerate(logs)))
    report = await verify_chain(logs[0].store)
    assert report.ok and report.records == 50
    for log in logs:
        await log.store.aclose()


async def test_concurrent_appends_are_group_committed(engine: AsyncEngine) -> None:
    store = AuditStore(engine)
    batches: list[int] = []
    append = store.append

    async def counting(rows: Any, seal: Any) -> Any:
        batches.append(len(rows))
        return await append(rows, seal)

    store.append = counting  # type: ignore[method-assign]
    log = AuditLog(store, KEY)
    group = GroupCommit.of(engine) if store.grouped else None  # PostgreSQL: the store batches appends
    before = group.batches if group is not None else 0
    await asyncio.gather(*(log.append(_event(n)) for n in range(200)))
    written = group.batches - before if group is not None else len(batches)
    assert sum(batches) == 200 and 0 < written < 20
    assert (await verify_chain(store)).records == 200
    await store.aclose()


async def test_an_unwritable_log_fails_appends_and_recovers(engine: AsyncEngine) -> None:
    store = AuditStore(engine)
    log = AuditLog(store, KEY)
    await log.append(_event(0))
    async with engine.begin() as conn:
        await conn.execute(text("ALTER TABLE audit_records RENAME TO audit_records_away"))
    with pytest.raises(AuditUnavailable):
        await log.append(_event(1))
    assert log.writable is False
    async with engine.begin() as conn:
        await conn.execute(text("ALTER TABLE audit_records_away RENAME TO audit_records"))
    await log.append(_event(2))
    assert log.writable is True
    assert (await verify_chain(store)).records == 2
    await store.aclose()


async def test_personal_data_and_secrets_never_reach_a_row(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    secret_token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
    await log.append(
        AuditEvent(
            EventKind.AUTH_FAILURE,
            actor="user:ada@example.com",
            reasons=(f"bad token {secret_token}",),
            details={"password": "hunter2", "note": "Bearer abcdefghijklmnop", "who": "ada@example.com"},
        )
    )
    async with engine.connect() as conn:
        dump = str((await conn.execute(text("SELECT * FROM audit_records"))).all())
    for secret in ("ada@example.com", "hunter2", secret_token, "abcdefghijklmnop"):
        assert secret not in dump
    row = (await log.store.scan())[0]
    assert row.actor is not None and row.actor.startswith("user:pseudonym:")
    assert row.actor == log.row(AuditEvent(EventKind.CALL, actor="user:ada@example.com"))["actor"]
    await log.store.aclose()


def test_argument_hashes_are_keyed() -> None:
    store: Any = None
    one, other = AuditLog(store, b"a" * 32), AuditLog(store, b"b" * 32)
    arguments = {"pin": "1234"}
    assert one.args_hash(arguments) == one.args_hash({"pin": "1234"})
    assert one.args_hash(arguments) != other.args_hash(arguments)
    assert "1234" not in one.args_hash(arguments)
    # the hash of earlier records: HMAC-SHA256 over the canonical JSON, as hex
    expected = hmac.new(b"a" * 32, b'{"pin":"1234"}', hashlib.sha256).hexdigest()
    assert one.args_hash(arguments) == expected


def test_seals_and_keyed_hashes_stay_those_of_earlier_records() -> None:
    """Fixed values computed before the hashing was made cheaper: a change of encoding would break
    every chain written so far (and every arguments hash an operator compares)."""
    fields = {
        "seq": 7,
        "at": datetime(2026, 1, 2, 3, 4, 5, 60, tzinfo=UTC),
        "kind": "call",
        "actor": "user:\u00e5d\u0430",
        "actor_kind": "user",
        "tenant": "acme",
        "tool": "acme:crm:get_customer",
        "args_hash": "ab" * 32,
        "decision": "allow",
        "reasons": ["no authorization configured", "\u00fc"],
        "outcome": "success",
        "code": None,
        "trace_id": "t",
        "call_id": "c",
        "details": {"version": "1.0.0", "z": [1, "2"], "a": {"b": None}},
        "prev_hash": "0" * 64,
    }
    assert record_hash(fields) == "b13ce009ddd230691ccd44d5250e8bf53afd970491d84a5ac25a25fe6d241d13"
    store: Any = None  # hashing needs no store
    log = AuditLog(store, b"a" * 32)
    arguments = {"b": [1, 2.5, "\u00e9"], "a": {"y": None, "x": True}}
    assert log.args_hash(arguments) == "f63e1e8f30975f4c29075e73396c8fc7d6e08dfa0679f478d837ba085f248b5a"
    for _ in range(2):  # the second time from the remembered stored form
        assert log.stored_actor("user:ada@example.com") == "user:pseudonym:bd7f7cc67c5e093ecfa78ccf"
        assert log.stored_actor("user:alice") == "user:alice"


async def test_a_record_names_how_its_actor_authenticated(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    caller = Principal(PrincipalKind.AGENT, "bot", tenant="acme", credential="api_key:k_4f2a")
    await log.append(AuditEvent.by(caller, EventKind.CALL, outcome="success", tool="acme:crm:t1"))
    (row,) = await log.store.scan()
    assert row.details["authenticated_by"] == "api_key:k_4f2a"
    await log.store.aclose()


async def test_whole_second_and_sub_second_times_read_back_as_sealed(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    moments = [datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(2026, 1, 2, 3, 4, 5, 60, tzinfo=UTC)]
    for n, moment in enumerate(moments):
        await log.append(_event(n, at=moment))
    assert (await verify_chain(log.store)).ok
    assert [row.at for row in await log.store.query(AuditFilter())] == moments
    await log.store.aclose()


async def test_a_caller_that_goes_away_still_leaves_its_record(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    leaving = asyncio.create_task(log.append(_event(1)))
    await asyncio.sleep(0)  # it has started its append (and is waiting to write or to be written)
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    await log.aclose()
    report = await verify_chain(log.store)
    assert report.ok and report.records == 1
    await log.store.aclose()


async def test_pages_of_the_newest_records_continue_before_a_record_number(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    for n in range(12):
        await log.append(_event(n))
    newest = await log.store.query(AuditFilter(), 5)
    older = await log.store.query(AuditFilter(before_seq=newest[0].seq), 5)
    oldest = await log.store.query(AuditFilter(before_seq=older[0].seq), 5)
    assert [[row.seq for row in page] for page in (newest, older, oldest)] == [
        [8, 9, 10, 11, 12],
        [3, 4, 5, 6, 7],
        [1, 2],
    ]
    by_u1 = await log.store.query(AuditFilter(actor="user:u1", before_seq=11), 2)
    assert [row.seq for row in by_u1] == [5, 8]
    await log.store.aclose()


async def test_a_break_past_the_first_batch_is_found_with_the_records_before_it(engine: AsyncEngine) -> None:
    log = AuditLog(AuditStore(engine), KEY)
    await asyncio.gather(*(log.append(_event(n)) for n in range(1203)))
    report = await verify_chain(log.store)
    assert report.ok and report.records == 1203 and report.head_seq == 1203
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE audit_records SET tool = 'x' WHERE seq = 1101"))
    broken = await verify_chain(log.store)
    assert broken.broken is not None and broken.broken.seq == 1101 and broken.records == 1100
    await log.store.aclose()
