"""The rolled-up metrics history: calls, errors and a latency histogram per tool and per API.

A call adds to an in-memory roll-up (a dictionary update under a lock, no I/O); the flusher
(`HistoryFlusher`) hands what accumulated since its last round to the store every few seconds, so
a call never waits for a history write and a restart loses at most one round. Two resolutions are
kept: one-minute buckets (the last hour) and five-minute buckets (the last day). Latency is a
fixed-bucket histogram (`LATENCY_BOUNDS_S`, the Prometheus histogram's bounds), so roll-ups of
several replicas add up and p50/p95 are recomputed from the sum rather than averaged.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from colonnade.observability.metrics import DURATION_BUCKETS_S

__all__ = [
    "LATENCY_BOUNDS_S",
    "RESOLUTIONS_S",
    "HistoryFlusher",
    "HistoryPoint",
    "HistorySink",
    "MetricsRollup",
    "RollupCell",
    "RollupKey",
    "api_of",
    "quantile",
]

logger = logging.getLogger(__name__)

LATENCY_BOUNDS_S: tuple[float, ...] = DURATION_BUCKETS_S
"""Upper bounds of the latency buckets; one more bucket holds what is slower than the last."""

RESOLUTIONS_S: dict[int, int] = {60: 3600, 300: 86400}
"""Bucket width (seconds) -> how long its buckets are kept (seconds): a minute for an hour, five
minutes for a day."""

DIMENSIONS = ("tool", "api")


def api_of(tool: str) -> str:
    """The API a canonical tool name (`tenant:api:operation`) belongs to: `tenant:api`."""
    parts = tool.split(":")
    return ":".join(parts[:2]) if len(parts) >= 3 else tool


def _bucket_index(seconds: float) -> int:
    for index, bound in enumerate(LATENCY_BOUNDS_S):
        if seconds <= bound:
            return index
    return len(LATENCY_BOUNDS_S)


def quantile(histogram: Sequence[int], q: float) -> float | None:
    """The q-quantile (0-1) of a fixed-bucket histogram, interpolated inside its bucket (seconds).

    The bucket past the last bound reports the last bound: slower than that is all it knows.
    """
    total = sum(histogram)
    if total == 0:
        return None
    rank = q * total
    seen = 0
    for index, count in enumerate(histogram):
        if count and seen + count >= rank:
            if index >= len(LATENCY_BOUNDS_S):
                return LATENCY_BOUNDS_S[-1]
            low = LATENCY_BOUNDS_S[index - 1] if index > 0 else 0.0
            high = LATENCY_BOUNDS_S[index]
            return low + (high - low) * ((rank - seen) / count)
        seen += count
    return LATENCY_BOUNDS_S[-1]


@dataclass(frozen=True, slots=True)
class RollupKey:
    """One series bucket: width (s), its start, what it is about (`tool` or `api`) and which one."""

    resolution_s: int
    start: datetime
    dimension: str
    subject: str


@dataclass(slots=True)
class RollupCell:
    """What one bucket counted: calls, errors (any status but success), the latency histogram."""

    calls: int = 0
    errors: int = 0
    histogram: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BOUNDS_S) + 1))

    def add(self, other: RollupCell) -> None:
        self.calls += other.calls
        self.errors += other.errors
        for index, count in enumerate(other.histogram):
            self.histogram[index] += count


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One bucket of a series as read back (all replicas merged)."""

    start: datetime
    calls: int
    errors: int
    histogram: tuple[int, ...]

    @property
    def p50_s(self) -> float | None:
        return quantile(self.histogram, 0.5)

    @property
    def p95_s(self) -> float | None:
        return quantile(self.histogram, 0.95)

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0


_OK_STATUSES = frozenset({"success", "success_prep", "pending"})


class MetricsRollup:
    """The calls since the last flush, per bucket; `record` is on the call path, `drain` is not."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cells: dict[RollupKey, RollupCell] = {}
        self._starts: dict[int, tuple[int, datetime]] = {}

    def record(self, tool: str, status: str, seconds: float, at: float | None = None) -> None:
        """One finished call of `tool` (canonical name) with its outcome status and duration."""
        now = time.time() if at is None else at
        failed = status not in _OK_STATUSES
        bucket = _bucket_index(seconds)
        subjects = (("tool", tool), ("api", api_of(tool)))
        with self._lock:
            for resolution in RESOLUTIONS_S:
                start = self._start(resolution, now)
                for dimension, subject in subjects:
                    key = RollupKey(resolution, start, dimension, subject)
                    cell = self._cells.get(key)
                    if cell is None:
                        cell = self._cells[key] = RollupCell()
                    cell.calls += 1
                    cell.errors += failed
                    cell.histogram[bucket] += 1

    def _start(self, resolution: int, now: float) -> datetime:
        slot = int(now // resolution)
        cached = self._starts.get(resolution)
        if cached is None or cached[0] != slot:
            cached = self._starts[resolution] = (slot, datetime.fromtimestamp(slot * resolution, UTC))
        return cached[1]

    def drain(self) -> dict[RollupKey, RollupCell]:
        """Take what accumulated (the next round starts empty)."""
        with self._lock:
            cells, self._cells = self._cells, {}
        return cells

    def restore(self, cells: dict[RollupKey, RollupCell]) -> None:
        """Put back a round the store refused, so the next round carries it."""
        with self._lock:
            for key, cell in cells.items():
                mine = self._cells.get(key)
                if mine is None:
                    self._cells[key] = cell
                else:
                    mine.add(cell)


class HistorySink(Protocol):
    """Where rounds go (the store's `MetricsHistoryStore`)."""

    async def add(self, cells: dict[RollupKey, RollupCell]) -> None: ...

    async def purge_before(self, cutoffs: dict[int, datetime]) -> int: ...


class HistoryFlusher:
    """Every `interval_s`, moves the roll-up's round to the store and drops buckets past retention.

    A failing write keeps the round in memory for the next try (logged), so a store that is briefly
    away loses nothing; the call path never sees it.
    """

    def __init__(self, rollup: MetricsRollup, sink: HistorySink, *, interval_s: float = 10.0) -> None:
        self.rollup = rollup
        self.sink = sink
        self.interval_s = interval_s

    async def flush(self) -> int:
        """One round now; returns how many buckets were written."""
        cells = self.rollup.drain()
        if not cells:
            return 0
        try:
            await self.sink.add(cells)
        except BaseException:
            self.rollup.restore(cells)
            raise
        return len(cells)

    async def purge(self, now: datetime | None = None) -> int:
        moment = now or datetime.now(UTC)
        cutoffs = {res: moment - timedelta(seconds=keep + res) for res, keep in RESOLUTIONS_S.items()}
        return await self.sink.purge_before(cutoffs)

    async def run(self) -> None:
        """Flush every `interval_s` until cancelled; the last round is flushed on the way out."""
        rounds = 0
        try:
            while True:
                await asyncio.sleep(self.interval_s)
                try:
                    await self.flush()
                    rounds += 1
                    if rounds % 30 == 1:
                        await self.purge()
                except Exception:
                    logger.exception("writing the metrics history failed; the round is kept for the next")
        finally:
            try:
                await asyncio.shield(self.flush())
            except BaseException:
                logger.warning("the metrics history's last round was not written at shutdown")
