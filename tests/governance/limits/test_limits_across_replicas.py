"""Three gateways on one Redis hold one limit; with Redis gone each holds its share, then shares again."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.runtime.gateway import Gateway
from tests.governance.limits.conftest import (
    SLOW_TOOL,
    Served,
    build_gateway,
    call,
    limit_settings,
    running,
)
from tests.support.machine_load import patient
from tests.support.redis_server import OwnRedis

LOADER = Principal(PrincipalKind.AGENT, "loader", tenant="acme", persona="agent")


@contextlib.asynccontextmanager
async def _replicas(
    url: str, prefix: str, shop_url: str, rules: list[dict[str, object]], replicas: int | None = None
) -> AsyncIterator[list[Gateway]]:
    gateways = [
        build_gateway(
            limit_settings(rules, redis=(url, prefix), replicas=replicas, replica_id=f"r{i}"), shop_url
        )
        for i in range(3)
    ]
    async with contextlib.AsyncExitStack() as stack:
        for gateway in gateways:
            await stack.enter_async_context(running(gateway))
        yield gateways


async def _round_robin(
    gateways: list[Gateway], calls: int, *, at_once: int = 6, **kwargs: object
) -> list[CallResult]:
    """`calls` calls spread over the gateways in turn, `at_once` in flight (a balancer, no stickiness)."""
    turn = itertools.cycle(gateways)
    order = [next(turn) for _ in range(calls)]
    gate = asyncio.Semaphore(at_once)

    async def one(gateway: Gateway) -> CallResult:
        async with gate:
            return await call(gateway, **kwargs)  # type: ignore[arg-type]

    return await asyncio.gather(*(one(gateway) for gateway in order))


def _codes(results: list[CallResult]) -> set[str]:
    return {r.error.code if r.error is not None else r.status.value for r in results}


async def test_three_replicas_hold_one_agents_limit_within_five_percent(
    redis_url: str, redis_prefix: str, shop: tuple[str, Served]
) -> None:
    limit = 60
    rules = [{"name": "agent-minute", "per": "agent", "requests": limit, "window_s": 60}]
    url, served = shop
    async with _replicas(redis_url, redis_prefix, url, rules) as gateways:
        before = served.hits
        results = await _round_robin(gateways, 3 * limit)
        succeeded = sum(r.status is CallStatus.SUCCESS for r in results)
        assert abs(succeeded - limit) <= 0.05 * limit, succeeded
        assert _codes(results) == {"success", "R-CAP-RATE-LIMITED"}
        refused = [r.error for r in results if r.error is not None]
        assert all(e.details["enforced"] == "shared" and e.details["limit"] == limit for e in refused)
        assert all(0 < e.details["retry_after_ms"] <= 60_001 for e in refused)
        assert served.hits - before == succeeded
        for gateway in gateways:
            assert (await gateway.status())["limits"]["enforcing"] == "shared"


async def test_retry_after_ms_from_one_replica_is_good_on_another(
    redis_url: str, redis_prefix: str, shop: tuple[str, Served]
) -> None:
    rules = [{"name": "agent-second", "per": "agent", "requests": 6, "window_s": 1}]
    async with _replicas(redis_url, redis_prefix, shop[0], rules) as gateways:
        results = await _round_robin(gateways, 12, at_once=1)
        assert sum(r.status is CallStatus.SUCCESS for r in results) == 6
        last = results[-1].error
        assert last is not None and last.code == "R-CAP-RATE-LIMITED"
        await asyncio.sleep(last.details["retry_after_ms"] / 1000)
        assert (await call(gateways[0])).status is CallStatus.SUCCESS


async def test_concurrency_max_holds_across_replicas(
    redis_url: str, redis_prefix: str, shop: tuple[str, Served]
) -> None:
    rules = [{"name": "slow-two", "tools": [SLOW_TOOL], "concurrency": 2}]
    async with _replicas(redis_url, redis_prefix, shop[0], rules) as gateways:
        results = await _round_robin(gateways, 6, at_once=6, tool=SLOW_TOOL)
        assert sum(r.status is CallStatus.SUCCESS for r in results) == 2
        assert _codes(results) == {"success", "R-CAP-RATE-LIMITED"}
        again = await _round_robin(gateways, 2, at_once=2, tool=SLOW_TOOL)
        assert all(r.status is CallStatus.SUCCESS for r in again), "the slots were given back"


async def _until(condition: object, within_s: float) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while not condition():  # type: ignore[operator]
        assert loop.time() < end, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_redis_stopped_under_load_each_replica_holds_its_share_then_shares_again(
    own_redis: OwnRedis, redis_prefix: str, shop: tuple[str, Served]
) -> None:
    limit = 30
    rules = [
        {
            "name": "agent-minute",
            "per": "agent",
            "requests": limit,
            "window_s": 60,
            "principals": ["agent:bot"],
        },
        {"name": "loader-minute", "per": "agent", "requests": 100_000, "principals": ["agent:loader"]},
    ]
    async with _replicas(own_redis.url, redis_prefix, shop[0], rules) as gateways:
        await _until(
            lambda: all(g.shared.replicas and g.shared.replicas.live == 3 for g in gateways), patient(10)
        )
        load_results: list[CallResult] = []
        stop = asyncio.Event()

        async def load() -> None:
            for gateway in itertools.cycle(gateways):
                if stop.is_set():
                    return
                load_results.append(await call(gateway, LOADER))

        loader = asyncio.create_task(load())
        await asyncio.sleep(0.2)
        await asyncio.to_thread(own_redis.stop)
        await _until(lambda: all(g.limiter.degraded for g in gateways), patient(10))

        degraded = await _round_robin(gateways, 3 * limit)
        assert sum(r.status is CallStatus.SUCCESS for r in degraded) == 3 * (limit // 3)
        refused = [r.error for r in degraded if r.error is not None]
        assert {e.code for e in refused} == {"R-CAP-RATE-LIMITED"}
        assert all(
            e.details["enforced"] == "local_share" and e.details["limit"] == limit // 3 for e in refused
        )
        status = (await gateways[1].status())["limits"]
        assert status["degraded"] is True and status["local_share"] == "1/3"
        assert status["replicas_from"] == "heartbeat"

        await asyncio.to_thread(own_redis.start)
        await _until(lambda: not any(g.limiter.degraded for g in gateways), patient(10))
        shared = await _round_robin(gateways, 2 * limit)
        stop.set()
        await loader
        assert sum(r.status is CallStatus.SUCCESS for r in shared) == limit, "Redis restarted empty"
        assert all(r.error.details["enforced"] == "shared" for r in shared if r.error is not None)
        assert (await gateways[0].status())["limits"]["enforcing"] == "shared"

        assert len(load_results) > 10
        assert _codes(load_results) == {"success"}, "no call failed for Redis: no 5xx, no internal fault"
