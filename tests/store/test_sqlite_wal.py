"""The embedded database stays bounded: its write-ahead log under continuous keyed traffic, and when idle.

Every keyed call writes twice (claim, then outcome), about 20 KB of log. A log that is only ever
checkpointed PASSIVE-ly while writes continue never restarts and grows by all of it (1 GB after
55,000 calls, issue 11); here thousands of calls must leave it under a fixed bound.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.idempotency_repo import IdempotencyStore, new_holder
from colonnade.store.sqlite_direct import IDLE_S, WAL_LIMIT_BYTES

CALLS = 3_000
WORKERS = 8
BOUND = WAL_LIMIT_BYTES + 1024 * 1024  # the limit, and what a few writes add while a checkpoint runs
# The size of a typical stored outcome (a CallResult with a small output, metrics and provenance).
OUTCOME = {
    "call_id": "0" * 36,
    "status": "success",
    "output": {"payment_id": "PAY-000000", "note": "x" * 200},
    "metrics": {"duration_ms": 1.234, "cpu_ms": None, "memory_peak_mb": None},
    "provenance": {"tool_id": "acme:payments:create_payment", "tool_version": "1.0.0", "digest": "f" * 64},
    "warnings": [],
}


@pytest.fixture
async def store(tmp_path: Path) -> IdempotencyStore:
    engine = create_store_engine(f"sqlite+aiosqlite:///{tmp_path / 'soak.db'}")
    await migrate_engine(engine)
    await engine.dispose()
    return IdempotencyStore(engine)


def _wal(tmp_path: Path) -> int:
    wal = tmp_path / "soak.db-wal"
    return wal.stat().st_size if wal.exists() else 0


async def _keyed_calls(store: IdempotencyStore, tmp_path: Path, calls: int) -> list[int]:
    """`calls` claims and outcomes from WORKERS concurrent callers; the WAL size after each call."""
    sizes: list[int] = []
    keys = iter(range(calls))

    async def worker() -> None:
        for n in keys:
            holder = new_holder()
            claim = await store.claim(
                "acme|acme:payments:create_payment|-",
                f"k-{n}",
                "h" * 64,
                holder=holder,
                lease_s=35,
                retention_s=86_400,
            )
            assert claim.kind == "claimed"
            assert await store.complete("acme|acme:payments:create_payment|-", f"k-{n}", holder, OUTCOME)
            sizes.append(_wal(tmp_path))
            await asyncio.sleep(0)  # other callers' turn, as calls interleave in a gateway

    await asyncio.gather(*(worker() for _ in range(WORKERS)))
    return sizes


async def test_the_wal_stays_bounded_under_continuous_keyed_calls(
    store: IdempotencyStore, tmp_path: Path
) -> None:
    try:
        sizes = await _keyed_calls(store, tmp_path, CALLS)
    finally:
        await store.aclose()
    assert len(sizes) == CALLS
    # Unchecked, the log would hold every write: far beyond the bound after this many calls.
    assert max(sizes) <= BOUND, f"WAL reached {max(sizes):,} bytes (bound {BOUND:,})"
    assert _wal(tmp_path) == 0  # closing truncates it
    assert (tmp_path / "soak.db").stat().st_size > 0  # the records went into the database itself


async def test_the_wal_is_emptied_once_writes_stop(store: IdempotencyStore, tmp_path: Path) -> None:
    try:
        await _keyed_calls(store, tmp_path, 300)
        assert _wal(tmp_path) > 0
        await asyncio.sleep(IDLE_S + 1.0)
        idle = _wal(tmp_path)
    finally:
        await store.aclose()
    assert idle == 0
