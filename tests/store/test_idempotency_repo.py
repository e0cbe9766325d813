"""Idempotency records: holders, keys in doubt, retried writes, purging, and a cut connection."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.idempotency_repo import Claim, IdempotencyStore, held_here, new_holder
from colonnade.store.store_errors import StoreUnavailable
from tests.support.databases import schema_connect_args
from tests.support.store_faults import cut_connections

SCOPE = "acme|acme:payments:pay|-"
HASH = "a" * 64
DONE = {"status": "success", "output": {"paid": 1}}


@pytest.fixture
async def store(engine: AsyncEngine) -> AsyncIterator[IdempotencyStore]:
    made = IdempotencyStore(engine)
    yield made
    await made.aclose()


async def _claim(
    store: IdempotencyStore, key: str, holder: str, *, lease_s: float = 30, take_over: bool = False
) -> Claim:
    return await store.claim(
        SCOPE, key, HASH, holder=holder, lease_s=lease_s, retention_s=3600, take_over_in_doubt=take_over
    )


def test_holders_are_unique_and_know_their_process() -> None:
    first, second = new_holder(), new_holder()
    assert first != second and held_here(first) and held_here(second)
    assert not held_here("0123456789abcdef.1") and not held_here(None)


async def test_a_claim_sent_again_by_its_holder_is_still_its_own(store: IdempotencyStore) -> None:
    """The answer to a claim can be lost after its commit; asking again must not refuse the holder."""
    holder = new_holder()
    assert (await _claim(store, "k-again", holder)).kind == "claimed"
    again = await _claim(store, "k-again", holder)
    other = await _claim(store, "k-again", new_holder())
    assert again.kind == "claimed" and again.holder == holder
    assert other.kind == "in_flight" and other.holder == holder and 25 < other.lease_left_s <= 30


async def test_a_key_in_doubt_is_taken_over_only_when_repeating_is_allowed(store: IdempotencyStore) -> None:
    gone = new_holder()
    await _claim(store, "k-doubt", gone, lease_s=0.05)
    await asyncio.sleep(0.1)
    refused = await _claim(store, "k-doubt", new_holder())
    assert refused.kind == "in_doubt" and refused.holder == gone
    taker = new_holder()
    taken = await _claim(store, "k-doubt", taker, take_over=True)
    assert taken.kind == "claimed" and taken.taken_over and taken.holder == taker


async def test_writes_of_a_superseded_attempt_change_nothing(store: IdempotencyStore) -> None:
    late, taker = new_holder(), new_holder()
    await _claim(store, "k-late", late, lease_s=0.05)
    await asyncio.sleep(0.1)
    await _claim(store, "k-late", taker, take_over=True)
    assert not await store.complete(SCOPE, "k-late", late, {"status": "stale"})
    await store.release(SCOPE, "k-late", late)  # must not free the taker's key
    assert (await _claim(store, "k-late", new_holder())).kind == "in_flight"
    assert await store.complete(SCOPE, "k-late", taker, DONE)
    assert await store.complete(SCOPE, "k-late", taker, DONE)  # a repeated write lands again, harmlessly
    done = await _claim(store, "k-late", new_holder())
    assert done.kind == "done" and done.result == DONE


async def test_a_released_key_is_claimed_afresh(store: IdempotencyStore) -> None:
    holder = new_holder()
    await _claim(store, "k-free", holder)
    await store.release(SCOPE, "k-free", holder)
    await store.release(SCOPE, "k-free", holder)  # repeated: nothing left to free
    assert (await _claim(store, "k-free", new_holder())).kind == "claimed"


async def test_purge_deletes_expired_records_in_batches(store: IdempotencyStore) -> None:
    for n in range(7):
        await store.claim(SCOPE, f"old-{n}", HASH, holder=new_holder(), lease_s=0.01, retention_s=0.01)
    await _claim(store, "live", new_holder())
    await asyncio.sleep(0.05)
    assert await store.purge_expired(batch=3) == 7
    assert (await _claim(store, "live", new_holder())).kind == "in_flight"
    assert (await _claim(store, "old-0", new_holder())).kind == "claimed"


@pytest.mark.postgres
async def test_a_cut_connection_is_store_unavailable_and_the_pool_reconnects(postgres_url: str) -> None:
    """PostgreSQL ends the store's session mid-statement (as a restart does); the next claim works."""
    schema, name = f"colonnade_test_{uuid.uuid4().hex[:12]}", f"colonnade-cut-{uuid.uuid4().hex[:8]}"
    admin = create_store_engine(postgres_url)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    args = schema_connect_args(schema)
    args["server_settings"]["application_name"] = name
    engine = create_store_engine(postgres_url, connect_args=args)
    store = IdempotencyStore(engine)
    try:
        await migrate_engine(engine)
        async with admin.begin() as lock:  # holds the claim's INSERT until its session is cut
            await lock.execute(text(f'LOCK TABLE "{schema}".idempotency_records IN ACCESS EXCLUSIVE MODE'))
            blocked = asyncio.create_task(_claim(store, "during-cut", new_holder()))
            await asyncio.sleep(0.3)
            assert await cut_connections(admin, name) >= 1
            with pytest.raises(StoreUnavailable):
                await blocked
        assert (await _claim(store, "after-cut", new_holder())).kind == "claimed"
        assert await cut_connections(admin, name) >= 1  # now the idle session waiting in the pool
        assert (await _claim(store, "after-idle-cut", new_holder())).kind == "claimed"  # pre-ping: a new one
    finally:
        await engine.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
