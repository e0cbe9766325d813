"""CPU cost of the metrics history on the call path: `MetricsRollup.record` per call, and one flush
round of a busy minute (100 tools) to SQLite, which runs in the background, never in a call.

Run: .venv/bin/python bench/metrics_history.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from colonnade.observability.metrics_history import HistoryFlusher, MetricsRollup
from colonnade.store import create_store_engine
from colonnade.store.metrics_history_repo import MetricsHistoryStore
from colonnade.store.migrator import migrate_engine

CALLS = 200_000
TOOLS = [f"acme:api{n % 10}:op{n}" for n in range(100)]


def per_call_us() -> float:
    rollup = MetricsRollup()
    started = time.process_time()
    for index in range(CALLS):
        rollup.record(TOOLS[index % len(TOOLS)], "success", 0.004)
    return (time.process_time() - started) / CALLS * 1e6


async def flush_ms() -> float:
    with tempfile.TemporaryDirectory() as folder:
        engine = create_store_engine(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}")
        await migrate_engine(engine)
        rollup = MetricsRollup()
        flusher = HistoryFlusher(rollup, MetricsHistoryStore(engine, "bench"))
        rounds, total = 5, 0.0
        for _ in range(rounds):
            for index in range(10_000):
                rollup.record(TOOLS[index % len(TOOLS)], "success", 0.004)
            started = time.perf_counter()
            await flusher.flush()
            total += time.perf_counter() - started
        await engine.dispose()
        return total / rounds * 1000


def main() -> None:
    print(f"record(): {per_call_us():.2f} µs CPU per call ({CALLS} calls, {len(TOOLS)} tools)")
    flush = asyncio.run(flush_ms())
    print(f"flush round (10,000 calls, 220 buckets, SQLite): {flush:.1f} ms wall, off the call path")


if __name__ == "__main__":
    main()
