"""The metrics history over SQLite and PostgreSQL: rounds add up, replicas merge, a new store
instance (a restarted gateway) reads what the old one flushed, and old buckets are purged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.observability.metrics_history import HistoryFlusher, MetricsRollup, quantile
from colonnade.store.metrics_history_repo import MetricsHistoryStore

T0 = datetime(2026, 12, 2, 12, 0, tzinfo=UTC).timestamp()
TOOL = "acme:crm:get_customer"


def _calls(rollup: MetricsRollup, count: int, *, at: float, seconds: float, status: str = "success") -> None:
    for _ in range(count):
        rollup.record(TOOL, status, seconds, at=at)


async def test_rounds_add_up_and_a_restarted_store_reads_them(engine: AsyncEngine) -> None:
    rollup = MetricsRollup()
    flusher = HistoryFlusher(rollup, MetricsHistoryStore(engine, "r1"))
    _calls(rollup, 90, at=T0 + 5, seconds=0.004)
    _calls(rollup, 10, at=T0 + 6, seconds=0.4, status="retryable_error")
    assert await flusher.flush() == 4  # two resolutions x (tool, api)
    _calls(rollup, 100, at=T0 + 30, seconds=0.004)
    await flusher.flush()
    _calls(rollup, 7, at=T0 + 65, seconds=0.004)
    await flusher.flush()

    restarted = MetricsHistoryStore(engine, "r1-after-restart")
    since = datetime.fromtimestamp(T0, UTC)
    minutes = (await restarted.series(60, "tool", since))[TOOL]
    assert [(point.calls, point.errors) for point in minutes] == [(200, 10), (7, 0)]
    first = minutes[0]
    assert first.p50_s is not None and 0.0025 < first.p50_s <= 0.005
    assert first.p95_s is not None and 0.0025 < first.p95_s <= 0.005  # 190 of 200 calls were fast
    slowest = quantile(first.histogram, 0.99)
    assert slowest is not None and 0.25 < slowest <= 0.5
    assert first.error_rate == 10 / 200
    five = (await restarted.series(300, "api", since))["acme:crm"]
    assert [(point.calls, point.errors) for point in five] == [(207, 10)]


async def test_replicas_write_their_own_rows_and_reads_merge_them(engine: AsyncEngine) -> None:
    one, two = MetricsRollup(), MetricsRollup()
    _calls(one, 3, at=T0 + 1, seconds=0.001)
    _calls(two, 5, at=T0 + 2, seconds=1.5, status="terminal_error")
    await HistoryFlusher(one, MetricsHistoryStore(engine, "a")).flush()
    await HistoryFlusher(two, MetricsHistoryStore(engine, "b")).flush()
    reader = MetricsHistoryStore(engine, "c")
    points = (await reader.series(60, "tool", datetime.fromtimestamp(T0, UTC)))[TOOL]
    assert [(point.calls, point.errors) for point in points] == [(8, 5)]
    assert sum(points[0].histogram) == 8


async def test_a_refused_round_is_kept_for_the_next(engine: AsyncEngine) -> None:
    rollup = MetricsRollup()
    store = MetricsHistoryStore(engine, "r")

    class Refusing:
        async def add(self, cells: object) -> None:
            raise ConnectionError("database away")

        async def purge_before(self, cutoffs: object) -> int:
            return 0

    _calls(rollup, 4, at=T0 + 1, seconds=0.01)
    failing = HistoryFlusher(rollup, Refusing())
    with pytest.raises(ConnectionError):
        await failing.flush()
    _calls(rollup, 1, at=T0 + 2, seconds=0.01)
    await HistoryFlusher(rollup, store).flush()
    points = (await store.series(60, "tool", datetime.fromtimestamp(T0, UTC)))[TOOL]
    assert points[0].calls == 5


async def test_buckets_past_retention_are_purged(engine: AsyncEngine) -> None:
    rollup = MetricsRollup()
    flusher = HistoryFlusher(rollup, MetricsHistoryStore(engine, "r"))
    _calls(rollup, 2, at=T0, seconds=0.01)
    await flusher.flush()
    now = datetime.fromtimestamp(T0, UTC) + timedelta(hours=2)
    assert await flusher.purge(now) == 2  # the minute buckets went, the five-minute ones stay a day
    store = MetricsHistoryStore(engine, "r")
    since = datetime.fromtimestamp(T0 - 1, UTC)
    assert await store.series(60, "tool", since) == {}
    assert (await store.series(300, "tool", since))[TOOL][0].calls == 2
