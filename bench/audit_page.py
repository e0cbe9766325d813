"""What does the audit page cost as the log grows? Its query, its rendering, and the chain check.

Fills a SQLite audit log (the embedded default) with N call records through `AuditLog` (real
sealing and chaining), then times, for each size: one page of the newest 50 records (the store
query), one page filtered by a tool, rendering that page to HTML, and `verify_chain` over the
whole log (what the page shows as the chain status, and reuses for 30 s), with the longest time
the event loop went unanswered meanwhile. Median of several rounds, wall-clock milliseconds.

Run: .venv/bin/python bench/audit_page.py [--sizes 1000,10000,50000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from colonnade.governance.audit import AuditEvent, AuditLog, EventKind, verify_chain
from colonnade.governance.audit.readers import AuditReach
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.audit_repo import AuditFilter, AuditStore
from colonnade.surfaces.pages.audit_page import audit_page
from colonnade.surfaces.pages.audit_query import PAGE_SIZE, AuditQuery

_TOOLS = [f"acme:items:tool_{n}" for n in range(40)]


async def _fill(log: AuditLog, upto: int, have: int) -> None:
    batch = 500
    for start in range(have, upto, batch):
        events = [
            AuditEvent(
                EventKind.CALL,
                actor=f"user:u{n % 17}",
                actor_kind="user",
                tenant="acme",
                tool=_TOOLS[n % len(_TOOLS)],
                args_hash=log.args_hash({"n": n}),
                decision="allow",
                reasons=("admin calls with colonnade:catalog:write",),
                outcome="success" if n % 9 else "invalid_request",
                trace_id=f"{n:032x}",
            )
            for n in range(start, min(start + batch, upto))
        ]
        await asyncio.gather(*(log.append(event) for event in events))


async def _median_ms(work: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def _longest_stall_ms(work: Callable[[], Awaitable[object]]) -> float:
    """The longest the event loop went unanswered while `work` ran (what calls in flight wait)."""
    longest, running = 0.0, True

    async def tick() -> None:
        nonlocal longest
        while running:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            longest = max(longest, (time.perf_counter() - before) * 1000 - 1)

    ticker = asyncio.create_task(tick())
    await work()
    running = False
    await ticker
    return longest


async def _measure(store: AuditStore, size: int, rounds: int) -> list[str]:
    newest = await _median_ms(lambda: store.query(AuditFilter(), PAGE_SIZE + 1), rounds)
    one_tool = AuditFilter(tool=_TOOLS[3])
    filtered = await _median_ms(lambda: store.query(one_tool, PAGE_SIZE + 1), rounds)
    records = (await store.query(AuditFilter(), PAGE_SIZE + 1))[::-1]
    report = await verify_chain(store)
    assert report.ok and report.records == size

    async def render() -> object:
        seen = (report, datetime.now(UTC))
        return audit_page(records[:PAGE_SIZE], AuditQuery(), chain=seen, reach=AuditReach(None), older=True)

    rendered = await _median_ms(render, rounds)
    verified = await _median_ms(lambda: verify_chain(store), max(1, rounds // 2))
    stall = await _longest_stall_ms(lambda: verify_chain(store))
    return [f"{newest:.2f}", f"{filtered:.2f}", f"{rendered:.2f}", f"{verified:.0f}", f"{stall:.0f}"]


async def main(sizes: list[int], rounds: int) -> None:
    table = Table(
        "records",
        "newest page (ms)",
        "tool filter (ms)",
        "render (ms)",
        "verify chain (ms)",
        "longest loop stall in verify (ms)",
        title="audit page",
    )
    with tempfile.TemporaryDirectory() as folder:
        engine = create_store_engine(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}")
        await migrate_engine(engine)
        store = AuditStore(engine)
        log = AuditLog(store, b"k" * 32)
        have = 0
        for size in sorted(sizes):
            await _fill(log, size, have)
            have = size
            table.add_row(str(size), *await _measure(store, size, rounds))
        await log.aclose()
        await store.aclose()
        await engine.dispose()
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,50000", help="log sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main([int(size) for size in options.sizes.split(",")], options.rounds))
