"""The gateway's call metrics as numbers a page can show, read in-process from its own registry.

The values are those `/metrics` exposes (the collectors `GatewayMetrics` registered in its
registry), read without an HTTP scrape. Latency percentiles are estimates: a histogram keeps
only bucket counts, so a percentile is interpolated linearly inside the bucket it falls in,
the way Prometheus' `histogram_quantile` does.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client import Metric

from colonnade.calls.envelope import CallStatus
from colonnade.observability.metrics import GatewayMetrics

__all__ = [
    "MAIN_STATUSES",
    "CallStats",
    "ErrorCount",
    "Estimate",
    "ToolCalls",
    "bucket_quantile",
    "read_stats",
]

MAIN_STATUSES = (
    CallStatus.SUCCESS.value,
    CallStatus.RETRYABLE_ERROR.value,
    CallStatus.TERMINAL_ERROR.value,
    CallStatus.INVALID_REQUEST.value,
)
"""The outcome columns always shown; others (success_prep, cancelled) appear once they occur."""

TOP_ERRORS = 10

_Buckets = dict[float, float]  # upper bound -> cumulative count


@dataclass(frozen=True, slots=True)
class Estimate:
    """A percentile in seconds; `beyond_last_bucket` means only "more than `seconds`" is known."""

    seconds: float
    beyond_last_bucket: bool = False


@dataclass(frozen=True, slots=True)
class ToolCalls:
    tool: str
    by_status: Mapping[str, int]
    in_flight: int = 0
    p50: Estimate | None = None
    p95: Estimate | None = None

    @property
    def total(self) -> int:
        return sum(self.by_status.values())


@dataclass(frozen=True, slots=True)
class ErrorCount:
    code: str
    status: str
    calls: int
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CallStats:
    tools: tuple[ToolCalls, ...] = ()
    """Tools with at least one finished or running call, busiest first."""
    errors: tuple[ErrorCount, ...] = ()
    """The most frequent error codes, most frequent first."""
    p50: Estimate | None = None
    p95: Estimate | None = None
    catalog_tools: int = 0
    statuses: tuple[str, ...] = field(default=MAIN_STATUSES)

    @property
    def total(self) -> int:
        return sum(tool.total for tool in self.tools)


def read_stats(metrics: GatewayMetrics, *, top_errors: int = TOP_ERRORS) -> CallStats:
    """Everything the metrics page shows, from one pass over the registry's current values."""
    counts: defaultdict[str, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    errors: defaultdict[tuple[str, str], defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    for labels, value in _samples(metrics.calls.collect(), "_total"):
        tool, status, code = labels["tool"], labels["status"], labels["code"]
        counts[tool][status] += int(value)
        if code:
            errors[(code, status)][tool] += int(value)
    in_flight = {
        labels["tool"]: int(value)
        for labels, value in _samples(metrics.calls_in_flight.collect(), "")
        if value
    }
    buckets: defaultdict[str, _Buckets] = defaultdict(lambda: defaultdict(float))
    overall: _Buckets = defaultdict(float)
    for labels, value in _samples(metrics.call_duration.collect(), "_bucket"):
        upper = float(labels["le"])
        buckets[labels["tool"]][upper] += value
        overall[upper] += value
    tools = [
        _tool_calls(tool, counts.get(tool, {}), in_flight.get(tool, 0), _sorted(buckets.get(tool, {})))
        for tool in {*counts, *in_flight}
    ]
    tools.sort(key=lambda t: (-t.total, -t.in_flight, t.tool))
    everything = _sorted(overall)
    return CallStats(
        tools=tuple(tools),
        errors=_top_errors(errors, top_errors),
        p50=bucket_quantile(0.5, everything),
        p95=bucket_quantile(0.95, everything),
        catalog_tools=int(sum(value for _, value in _samples(metrics.catalog_tools.collect(), ""))),
        statuses=_statuses(counts.values()),
    )


def bucket_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> Estimate | None:
    """The q-quantile of a histogram given as (upper bound, cumulative count), ending at +Inf.

    None when nothing was observed. Within the bucket holding the quantile the observations are
    assumed evenly spread; the first bucket starts at 0 (durations are never negative).
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"the quantile must be strictly between 0 and 1, got {q}")
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for upper, cumulative in buckets:
        if cumulative >= rank:
            if math.isinf(upper):
                return Estimate(lower, beyond_last_bucket=True)
            return Estimate(lower + (upper - lower) * (rank - below) / (cumulative - below))
        lower, below = upper, cumulative
    return Estimate(lower, beyond_last_bucket=True)


def _tool_calls(
    tool: str, by_status: Mapping[str, int], in_flight: int, buckets: Sequence[tuple[float, float]]
) -> ToolCalls:
    p50, p95 = bucket_quantile(0.5, buckets), bucket_quantile(0.95, buckets)
    return ToolCalls(tool, dict(by_status), in_flight, p50, p95)


def _samples(families: Iterable[Metric], suffix: str) -> Iterable[tuple[dict[str, str], float]]:
    """(labels, value) of each sample named `<family><suffix>`, e.g. a counter's `_total` samples."""
    for family in families:
        wanted = family.name + suffix
        for sample in family.samples:
            if sample.name == wanted:
                yield sample.labels, sample.value


def _sorted(buckets: Mapping[float, float]) -> list[tuple[float, float]]:
    return sorted(buckets.items())


def _top_errors(errors: Mapping[tuple[str, str], Mapping[str, int]], limit: int) -> tuple[ErrorCount, ...]:
    found = [
        ErrorCount(code, status, sum(by_tool.values()), tuple(sorted(by_tool, key=lambda t: -by_tool[t])))
        for (code, status), by_tool in errors.items()
    ]
    found.sort(key=lambda e: (-e.calls, e.code))
    return tuple(found[:limit])


def _statuses(per_tool: Iterable[Mapping[str, int]]) -> tuple[str, ...]:
    seen = {status for by_status in per_tool for status, n in by_status.items() if n}
    return (*MAIN_STATUSES, *sorted(seen - set(MAIN_STATUSES)))
