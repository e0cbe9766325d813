"""How fast a change reaches another replica, and what the shared values cost, on the real Redis.

Two `SharedState`s (two replicas' worth: separate connections and listeners) on one Redis prefix:
the time from `publish()` on one to its handler on the other, and the wall time of one shared-value
`set` and `get` (a page login, a routing session's read and write), against the in-process values
measured in the same run.

Run: .venv/bin/python bench/change_fanout.py [--changes 1000] [--redis redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from colonnade.config import SharedStateSettings
from colonnade.shared_state import Change, SharedState
from colonnade.shared_state.values import LocalValues, SharedValues


def _quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {p50 * 1e6:8.0f} µs   p99 {p99 * 1e6:8.0f} µs   max {ordered[-1] * 1e6:8.0f} µs"


async def _fanout(url: str, prefix: str, changes: int) -> list[float]:
    sender = SharedState(SharedStateSettings(redis_url=url, key_prefix=prefix), replica_id="sender")
    receiver = SharedState(SharedStateSettings(redis_url=url, key_prefix=prefix), replica_id="receiver")
    arrived: asyncio.Queue[float] = asyncio.Queue()

    async def handler(change: Change) -> None:
        arrived.put_nowait(time.perf_counter() - float(change.payload["sent"]))

    receiver.fanout.subscribe("bench", handler)
    latencies = []
    async with sender.running(), receiver.running():
        await receiver.fanout.listening()
        for _ in range(changes):
            await sender.fanout.publish("bench", {"sent": time.perf_counter()})
            latencies.append(await asyncio.wait_for(arrived.get(), 10))
    await sender.aclose()
    await receiver.aclose()
    return latencies


async def _values(values: SharedValues, rounds: int) -> tuple[list[float], list[float]]:
    record = b"x" * 400  # about a sealed page session or a routing session's context
    sets, gets = [], []
    for number in range(rounds):
        key = f"bench-{number}"
        start = time.perf_counter()
        await values.set(key, record, ttl_s=60)
        sets.append(time.perf_counter() - start)
        start = time.perf_counter()
        await values.get(key)
        gets.append(time.perf_counter() - start)
    for number in range(rounds):
        await values.delete(f"bench-{number}")
    return sets, gets


async def main(url: str, changes: int) -> None:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    latencies = await _fanout(url, prefix, changes)
    print(f"change fan-out, publish -> other replica's handler ({changes} changes): {_quantiles(latencies)}")
    shared = SharedState(SharedStateSettings(redis_url=url, key_prefix=prefix))
    await shared.start()
    for name, values in (("redis", shared.values), ("process", LocalValues())):
        sets, gets = await _values(values, changes)
        print(f"shared values ({name:7}) set: {_quantiles(sets)}")
        print(f"shared values ({name:7}) get: {_quantiles(gets)}")
    await shared.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    asyncio.run(main(args.redis, args.changes))
