"""Counters: a sliding window admits exactly its limit and says when the next call fits; slots lease.

The same checks run on the in-process counters and on real Redis (two counter objects on one
Redis prefix stand for two replicas).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from colonnade.config import SharedStateSettings
from colonnade.shared_state import SharedState
from colonnade.shared_state.counters import Counters, LocalCounters, SlotCheck, WindowCheck


@contextlib.asynccontextmanager
async def _redis_counters(url: str, prefix: str) -> AsyncIterator[Counters]:
    shared = SharedState(SharedStateSettings(redis_url=url, key_prefix=prefix, op_timeout_s=2.0))
    try:
        yield shared.counters
    finally:
        await shared.aclose()


@pytest.fixture(params=["process", pytest.param("redis", marks=pytest.mark.redis)])
def backend(request: pytest.FixtureRequest) -> tuple[str, str] | None:
    """None for the in-process counters; (url, prefix) of the machine's Redis otherwise."""
    if request.param == "process":
        return None
    return request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")


@contextlib.asynccontextmanager
async def _counters(backend: tuple[str, str] | None) -> AsyncIterator[Counters]:
    if backend is None:
        yield LocalCounters()
        return
    async with _redis_counters(*backend) as counters:
        yield counters


async def test_a_window_admits_its_limit_then_refuses_until_the_oldest_call_leaves(
    backend: tuple[str, str] | None,
) -> None:
    window = WindowCheck("w|agent|bot", limit=5, window_ms=600)
    async with _counters(backend) as counters:
        verdicts = [await counters.take([window], []) for _ in range(8)]
        assert [v.admitted for v in verdicts] == [True] * 5 + [False] * 3
        assert [v.usage[0].used for v in verdicts[:5]] == [1, 2, 3, 4, 5]
        refused = verdicts[-1]
        assert refused.refused == 0 and 0 < refused.retry_after_ms <= 601
        await asyncio.sleep(refused.retry_after_ms / 1000 + 0.02)
        assert (await counters.take([window], [])).admitted, "a call after retry_after_ms fits"


async def test_a_refused_check_counts_the_call_nowhere(backend: tuple[str, str] | None) -> None:
    roomy = WindowCheck("w|tenant|acme", limit=100, window_ms=60_000)
    tight = WindowCheck("w|agent|bot", limit=1, window_ms=60_000)
    async with _counters(backend) as counters:
        assert (await counters.take([roomy, tight], [])).admitted
        second = await counters.take([roomy, tight], [])
        assert second.refused == 1
        third = await counters.take([roomy], [])
        assert third.usage[0].used == 2, "the refused call took nothing from the roomy window"


async def test_slots_are_given_back_and_a_lost_one_ends_with_its_lease(
    backend: tuple[str, str] | None,
) -> None:
    slot = SlotCheck("c|tool", limit=2, lease_ms=300)
    async with _counters(backend) as counters:
        first = await counters.take([], [slot])
        second = await counters.take([], [slot])
        assert first.admitted and second.admitted
        assert (await counters.take([], [slot])).refused == 0
        await counters.release([slot], first.holder)
        assert (await counters.take([], [slot])).admitted, "a released slot is free at once"
        assert not (await counters.take([], [slot])).admitted
        await asyncio.sleep(0.35)  # nobody released: the holders "died"; their leases end
        assert (await counters.take([], [slot])).admitted


async def test_two_replicas_on_one_redis_share_one_window(redis_url: str, redis_prefix: str) -> None:
    window = WindowCheck("w|agent|bot", limit=10, window_ms=60_000)
    async with (
        _redis_counters(redis_url, redis_prefix) as a,
        _redis_counters(redis_url, redis_prefix) as b,
    ):
        verdicts = await asyncio.gather(*(replica.take([window], []) for replica in [a, b] * 15))
        assert sum(v.admitted for v in verdicts) == 10
        assert all(v.retry_after_ms > 0 for v in verdicts if not v.admitted)


async def test_in_process_counts_nobody_used_for_a_window_are_forgotten() -> None:
    counters = LocalCounters()
    for index in range(LocalCounters.SWEEP_EVERY - 1):
        counters.take_now([WindowCheck(f"w|agent|bot-{index}", limit=1, window_ms=1)], [])
    await asyncio.sleep(0.01)
    busy = WindowCheck("w|agent|busy", limit=5, window_ms=60_000)
    verdict = counters.take_now([busy], [])  # the sweep runs on this take
    assert verdict.admitted
    assert list(counters._windows) == ["w|agent|busy"]
