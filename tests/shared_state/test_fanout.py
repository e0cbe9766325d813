"""Changes reach the other replicas over real Redis pub/sub, and a gap ends in a resync."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from colonnade.config import SharedStateSettings
from colonnade.shared_state import Change, SharedState
from tests.support.machine_load import patient
from tests.support.redis_server import REDIS_UP_OP_TIMEOUT_S, OwnRedis


@contextlib.asynccontextmanager
async def _replica(url: str, prefix: str, name: str) -> AsyncIterator[SharedState]:
    shared = SharedState(
        SharedStateSettings(
            redis_url=url, key_prefix=prefix, probe_interval_s=0.1, op_timeout_s=REDIS_UP_OP_TIMEOUT_S
        ),
        replica_id=name,
    )
    await shared.start()
    try:
        async with shared.running():
            yield shared
    finally:
        await shared.aclose()


async def _received(inbox: asyncio.Queue[Change]) -> Change:
    return await asyncio.wait_for(inbox.get(), patient(5))


async def test_a_change_published_on_one_replica_reaches_the_others_but_not_itself(
    redis_url: str, redis_prefix: str
) -> None:
    inboxes: dict[str, asyncio.Queue[Change]] = {name: asyncio.Queue() for name in ("a", "b", "c")}
    async with (
        _replica(redis_url, redis_prefix, "a") as a,
        _replica(redis_url, redis_prefix, "b") as b,
        _replica(redis_url, redis_prefix, "c") as c,
    ):
        for shared in (a, b, c):
            shared.fanout.subscribe("key.revoked", inboxes[shared.replica_id].put)
        for shared in (a, b, c):
            await asyncio.wait_for(shared.fanout.listening(), patient(5))

        assert await a.fanout.publish("key.revoked", {"key_id": "k1"}) is True

        for name in ("b", "c"):
            change = await _received(inboxes[name])
            assert (change.topic, change.payload, change.origin, change.resync) == (
                "key.revoked",
                {"key_id": "k1"},
                "a",
                False,
            )
        await asyncio.sleep(0.2)
        assert inboxes["a"].empty(), "the replica that made the change already applied it"
        assert b.status()["changes_received"] == 1


async def test_two_gateways_on_one_redis_keep_apart_by_their_prefix(
    redis_url: str, redis_prefix: str
) -> None:
    inbox: asyncio.Queue[Change] = asyncio.Queue()
    async with (
        _replica(redis_url, redis_prefix, "a") as a,
        _replica(redis_url, redis_prefix + "-other", "b") as b,
    ):
        b.fanout.subscribe("policy.reloaded", inbox.put)
        await asyncio.wait_for(b.fanout.listening(), patient(5))
        await a.fanout.publish("policy.reloaded", {})
        await asyncio.sleep(0.3)
        assert inbox.empty()


async def test_one_process_has_nobody_to_tell() -> None:
    shared = SharedState()
    assert shared.fanout.shared is False
    assert await shared.fanout.publish("key.revoked", {"key_id": "k1"}) is False
    assert shared.status() == {"backend": "process", "replica_id": shared.replica_id, "degraded": False}


async def test_redis_away_degrades_then_recovers_with_a_resync(
    own_redis: OwnRedis, redis_prefix: str
) -> None:
    inbox: asyncio.Queue[Change] = asyncio.Queue()
    async with (
        _replica(own_redis.url, redis_prefix, "a") as a,
        _replica(own_redis.url, redis_prefix, "b") as b,
    ):
        b.fanout.subscribe("catalog.published", inbox.put)
        await asyncio.wait_for(b.fanout.listening(), patient(5))

        await asyncio.to_thread(own_redis.stop)
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await a.fanout.publish("catalog.published", {"api": "orders"}) is False
        assert loop.time() - started < patient(2), "a publish to an absent Redis is bounded"
        status = a.status()
        assert status["degraded"] is True and status["available"] is False
        assert status["degraded_since"] is not None and status["last_error"]

        await asyncio.to_thread(own_redis.start)
        resync = await _received(inbox)
        assert resync.resync is True and resync.topic == "catalog.published"
        assert a.link is not None
        await asyncio.wait_for(a.link.wait_recovered(), patient(5))
        assert not a.degraded, "the probe brings the link back without a restart"
        await asyncio.wait_for(b.fanout.listening(), patient(5))
        assert await a.fanout.publish("catalog.published", {"api": "orders"}) is True
        change = await _received(inbox)
        assert change.payload == {"api": "orders"} and change.resync is False


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@127.0.0.1:6379/0", "redis://***@127.0.0.1:6379/0"),
        ("redis://ops:s3cret@127.0.0.1:6379/0", "redis://ops:***@127.0.0.1:6379/0"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    ],
)
def test_status_never_shows_the_redis_password(url: str, shown: str) -> None:
    shared = SharedState(SharedStateSettings(redis_url=url))
    assert shared.status()["url"] == shown
