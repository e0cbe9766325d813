"""What the rate-limit stage costs per call: counted in this process, or in Redis across replicas.

The stage runs alone with a `next` that answers at once (a real catalog's tool, no backend), so
the numbers are the stage's own: matching the rules, one counter round trip (one Lua script on
Redis for every window and slot of the call, plus one release when it holds a slot) and the
handover of each limit's use. The variants take turns call by call, so they share the machine's
drift. CPU is this process's (the gateway's side of the round trip); wall includes Redis's.

Run: .venv/bin/python bench/rate_limit.py [--calls 5000] [--redis redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import redis.asyncio as redis_asyncio
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.stages.rate_limit import RateLimit
from colonnade.config import LimitsSettings, SharedStateSettings
from colonnade.governance.limits import Limiter
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.shared_state import SharedState
from tests.support.stage_calls import stage_call

BOT = Principal(PrincipalKind.AGENT, "bot", tenant="chaos", persona="agent")
WINDOW = {"name": "agent-minute", "per": "agent", "requests": 10_000_000, "window_s": 60}
SLOTS = {"name": "tenant-at-once", "per": "tenant", "concurrency": 1_000}


@dataclass
class Variant:
    label: str
    stage: RateLimit | None
    cpu_us: list[float] = field(default_factory=list)
    wall_us: list[float] = field(default_factory=list)


async def _answer(call: Call) -> CallResult:
    return call.result(CallStatus.SUCCESS, output={"ok": True})


async def _one(variant: Variant, call: Call) -> None:
    cpu, wall = time.process_time(), time.perf_counter()
    if variant.stage is None:
        result = await _answer(call)
    else:
        result = await variant.stage(call, _answer)
    variant.cpu_us.append((time.process_time() - cpu) * 1e6)
    variant.wall_us.append((time.perf_counter() - wall) * 1e6)
    assert result.status is CallStatus.SUCCESS, result.error


def _limiter(rules: list[dict[str, object]], shared: SharedState | None) -> Limiter:
    settings = LimitsSettings.model_validate({"rules": rules})
    if shared is None:
        return Limiter(settings)
    return Limiter(settings, shared=shared.counters, replicas=shared.replicas)


async def main(calls: int, redis_url: str) -> None:
    prefix = f"cln-bench-{uuid.uuid4().hex[:8]}"
    shared = SharedState(SharedStateSettings(redis_url=redis_url, key_prefix=prefix, op_timeout_s=2.0))
    if not await shared.link.check():  # type: ignore[union-attr]
        raise SystemExit(f"Redis at {redis_url} does not answer: start redis-server or pass --redis")
    variants = [
        Variant("no stage", None),
        Variant("stage, no rule applies", RateLimit(_limiter([{**WINDOW, "tools": ["other:*"]}], None))),
        Variant("in-process: 1 window", RateLimit(_limiter([WINDOW], None))),
        Variant("in-process: window + slot", RateLimit(_limiter([WINDOW, SLOTS], None))),
        Variant("Redis: 1 window", RateLimit(_limiter([WINDOW], shared))),
        Variant("Redis: window + slot", RateLimit(_limiter([WINDOW, SLOTS], shared))),
    ]
    call = stage_call().evolve(principal=BOT)
    rng = random.Random(7)
    for variant in variants:  # warm up: scripts loaded, connections open
        for _ in range(50):
            await _one(variant, call)
        variant.cpu_us.clear()
        variant.wall_us.clear()
    for _ in range(calls):
        order = variants[:]
        rng.shuffle(order)
        for variant in order:
            await _one(variant, call)
    client = redis_asyncio.Redis.from_url(redis_url)
    keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()
    await shared.aclose()

    base_cpu = statistics.median(variants[0].cpu_us)
    local_cpu = statistics.median(variants[3].cpu_us) - base_cpu
    table = Table(title=f"rate-limit stage, {calls} calls per variant (medians, µs per call)")
    for column in ("variant", "CPU µs", "wall µs", "p99 wall µs", "stage CPU µs", "x in-process"):
        table.add_column(column, justify="right" if column != "variant" else "left")
    for variant in variants:
        cpu = statistics.median(variant.cpu_us)
        wall = statistics.median(variant.wall_us)
        p99 = statistics.quantiles(variant.wall_us, n=100)[98]
        own = cpu - base_cpu
        ratio = f"{own / local_cpu:.2f}" if variant.stage is not None and local_cpu > 0 else ""
        table.add_row(variant.label, f"{cpu:.1f}", f"{wall:.1f}", f"{p99:.1f}", f"{own:.1f}", ratio)
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.redis))
