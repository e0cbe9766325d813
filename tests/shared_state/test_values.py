"""Shared values behave the same in one process and in Redis: expiry, claims, deletion."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from colonnade.config import SharedStateSettings
from colonnade.shared_state import SharedState, SharedStateUnavailable, SharedValues
from tests.support.redis_server import REDIS_UP_OP_TIMEOUT_S, OwnRedis


@pytest.fixture(params=["process", "redis"])
async def values(request: pytest.FixtureRequest) -> AsyncIterator[SharedValues]:
    if request.param == "process":
        yield SharedState().values
        return
    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    shared = SharedState(
        SharedStateSettings(redis_url=url, key_prefix=prefix, op_timeout_s=REDIS_UP_OP_TIMEOUT_S)
    )
    yield shared.values
    await shared.aclose()


async def test_set_get_delete(values: SharedValues) -> None:
    assert await values.get("session:1") is None
    await values.set("session:1", b"record", ttl_s=30)
    assert await values.get("session:1") == b"record"
    await values.delete("session:1")
    assert await values.get("session:1") is None


async def test_add_claims_once(values: SharedValues) -> None:
    assert await values.add("owner:s1", b"replica-a", ttl_s=30) is True
    assert await values.add("owner:s1", b"replica-b", ttl_s=30) is False
    assert await values.get("owner:s1") == b"replica-a"


async def test_values_expire(values: SharedValues) -> None:
    await values.set("login:x", b"1", ttl_s=0.05)
    await asyncio.sleep(0.2)
    assert await values.get("login:x") is None
    assert await values.add("login:x", b"2", ttl_s=30) is True


async def test_an_absent_redis_is_a_typed_answer_not_a_hang(own_redis: OwnRedis, redis_prefix: str) -> None:
    shared = SharedState(
        SharedStateSettings(redis_url=own_redis.url, key_prefix=redis_prefix, op_timeout_s=0.2)
    )
    try:
        await shared.values.set("k", b"v", ttl_s=30)
        await asyncio.to_thread(own_redis.stop)
        with pytest.raises(SharedStateUnavailable, match="unreachable"):
            await shared.values.get("k")
        assert shared.degraded
        with pytest.raises(SharedStateUnavailable):  # fails at once while down: no connect per call
            await shared.values.get("k")
    finally:
        await shared.aclose()


async def test_a_closed_transport_s_runtime_error_reads_as_redis_away() -> None:
    """uvloop raises RuntimeError for a write on a closed transport, and redis-py passes it on: the
    link must answer SharedStateUnavailable (a caller falls back), never let it fail the call."""
    from colonnade.shared_state.link import RedisLink, SharedStateUnavailable

    link = RedisLink("redis://127.0.0.1:6379/0")

    async def closed(_: object) -> None:
        raise RuntimeError("unable to perform operation on <TCPTransport closed=True>")

    with pytest.raises(SharedStateUnavailable):
        await link.run(closed)
    assert not link.available
    await link.client.aclose()
