"""Chaos: the gateway's own database fails while keyed payments run, on PostgreSQL and on SQLite.

On PostgreSQL the server terminates every session of this test's gateway every 20-150 ms (what
a database restart or failover does to a pool); on SQLite another connection takes the write lock
for 200-700 ms at a time (a long transaction elsewhere). 300 keyed payments run meanwhile, against
a backend that does not deduplicate. Then, once every lease has ended, another replica (a second
pipeline on the same database) resends every key until its answer is definite. No key may have
two payments; every success answered during the faults must be replayed unchanged; no answer may
be `S-TOOL-INTERNAL`; and no answer during the faults may be terminal but the "effect unknown" that
its resend replays: a call that ran while its record could not be made durable is answered
retryable with "resend with the same key", never terminal with "retry later" (which invites a new
key, and a second payment).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
import zlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.envelope import CallConstraints, RetryPolicy
from colonnade.calls.stages.idempotency import LEASE_GRACE_S
from colonnade.store import create_store_engine, migrate_engine
from tests.calls.conftest import Harness, build_harness
from tests.support.databases import schema_connect_args
from tests.support.exactly_once import NOT_YET, outcome_of, verify_exactly_once
from tests.support.store_faults import cut_connections, locked_store

CALLS = 300
CONCURRENCY = 24
TIMEOUT_MS = 500
ONCE = RetryPolicy(max_attempts=1)


@dataclass
class Store:
    engine: AsyncEngine
    application_name: str | None  # PostgreSQL: what this test's sessions are called


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_server(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite, else the PostgreSQL server's URL (once it is known to answer)."""
    if request.param == "sqlite":
        return None
    server: str = request.getfixturevalue("postgres_url")
    return server


@pytest.fixture
async def store(store_server: str | None, tmp_path: Path) -> AsyncIterator[Store]:
    """A migrated database; on PostgreSQL a private schema whose sessions carry their own name."""
    if store_server is None:
        engine = create_store_engine(f"sqlite+aiosqlite:///{tmp_path / 'faults.db'}")
        await migrate_engine(engine)
        yield Store(engine, None)
        await engine.dispose()
        return
    schema = f"colonnade_test_{uuid.uuid4().hex[:12]}"
    admin = create_store_engine(store_server)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    args = schema_connect_args(schema)
    args["server_settings"]["application_name"] = schema
    engine = create_store_engine(store_server, connect_args=args)
    try:
        await migrate_engine(engine)
        yield Store(engine, schema)
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


async def _faults(store: Store, stop: asyncio.Event) -> int:
    """Break the store until `stop`: cut sessions, or hold the write lock; returns how often."""
    rng, hits = random.Random(11), 0
    admin = create_store_engine(store.engine.url.render_as_string(hide_password=False))
    try:
        while not stop.is_set():
            if store.application_name is not None:
                await asyncio.sleep(rng.uniform(0.02, 0.15))
                hits += await cut_connections(admin, store.application_name)
            else:
                await asyncio.sleep(rng.uniform(0.05, 0.2))
                async with locked_store(store.engine):
                    await asyncio.sleep(rng.uniform(0.2, 0.7))
                hits += 1
    finally:
        await admin.dispose()
    return hits


async def _until_definite(harness: Harness, keys: list[str]) -> dict[str, dict[str, Any]]:
    """Resend every key, CONCURRENCY at a time, until each answer is definite."""
    final: dict[str, dict[str, Any]] = {}
    give_up = time.monotonic() + 60
    gate = asyncio.Semaphore(CONCURRENCY)

    async def pay(key: str) -> dict[str, Any]:
        async with gate:
            return await _pay(harness, key)

    while pending := [key for key in keys if key not in final]:
        answers = await asyncio.gather(*(pay(key) for key in pending))
        assert time.monotonic() < give_up, f"{len(pending)} keys never got a definite answer: {answers[:3]}"
        final.update((k, a) for k, a in zip(pending, answers, strict=True) if outcome_of(a) not in NOT_YET)
        await asyncio.sleep(0.2)
    return final


async def _pay(harness: Harness, key: str) -> dict[str, Any]:
    constraints = CallConstraints(idempotency_key=key, timeout_ms=TIMEOUT_MS, retry_policy=ONCE)
    slow = f"slow:{zlib.crc32(key.encode()) % 60 + 20}"  # 20-80 ms at the backend, the same on resends
    result = await harness.call("create_payment", slow, input={"note": key}, constraints=constraints)
    return result.model_dump(mode="json")


async def test_store_faults_while_keyed_payments_run(
    store: Store, fault_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="colonnade.calls.stages.idempotency")
    caplog.set_level(logging.DEBUG, logger="colonnade.store.group_commit")  # PostgreSQL: batches sent again
    httpx2.post(f"{fault_url}/reset")
    keys = [f"store-fault-{n}" for n in range(CALLS)]
    gateway, http = await build_harness(store.engine, fault_url)
    stop = asyncio.Event()
    faults = asyncio.create_task(_faults(store, stop))
    gate = asyncio.Semaphore(CONCURRENCY)

    async def pay(key: str) -> dict[str, Any]:
        async with gate:
            return await _pay(gateway, key)

    try:
        first = dict(zip(keys, await asyncio.gather(*(pay(key) for key in keys)), strict=True))
    finally:
        stop.set()
        hits = await faults
        await gateway.service.pipeline.drain()  # outcomes the faults delayed are written by now
        await http.aclose()
        await gateway.health.aclose()
    # The stage logs each store operation that failed or did not answer in time (and nothing else); on
    # PostgreSQL the group commit logs each batch whose connection was cut (sent again on a new one).
    watched = ("colonnade.calls.stages.idempotency", "colonnade.store.group_commit")
    store_failures = sum(record.name in watched for record in caplog.records)

    await asyncio.sleep(1.0 + LEASE_GRACE_S + 0.5)  # every lease has ended: nothing is "in progress"
    replica, replica_http = await build_harness(store.engine, fault_url)
    try:
        final = await _until_definite(replica, keys)
    finally:
        await replica_http.aclose()
        await replica.health.aclose()
    ledger = httpx2.get(f"{fault_url}/ledger").json()["ledger"]

    tally = verify_exactly_once(first, final, ledger, dict.fromkeys(keys, "payment"))
    answered = [answer for answer in first.values() if answer is not None]
    terminal = Counter(outcome_of(a) for a in answered if a["status"] == "terminal_error")
    assert set(terminal) <= {"S-TOOL-EFFECT-UNKNOWN"}, f"terminal answers during the faults: {terminal}"
    pending = {outcome_of(a) for a in answered if a["status"] == "retryable_error"}
    assert pending <= NOT_YET, pending  # each retryable answer is one a client resends with the same key
    database = store.engine.dialect.name
    print(f"\nstore faults on {database}: {hits} hits, {store_failures} store failures met")
    print(f"answers: {dict(sorted(tally.items()))}")
    assert hits > 0 and store_failures > 0  # the faults really hit the calls' store operations
