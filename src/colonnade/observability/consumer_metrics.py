"""Calls, errors and time per consumer (tenant, principal, agent) and tool version, with bounded cardinality.

Which consumer labels exist is the operator's choice (`telemetry.consumer_labels`, default: tenant
only); each label keeps at most `max_values` distinct values and counts later ones under `(other)`,
so callers cannot grow the number of series without bound. Time is a counter of seconds beside the
call counter (mean latency = seconds / calls): a histogram per consumer would multiply the series by
its buckets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from prometheus_client import CollectorRegistry, Counter

__all__ = ["CONSUMER_LABELS", "OTHER", "ConsumerLabel", "ConsumerMetrics"]

ConsumerLabel = Literal["tenant", "principal", "agent"]
CONSUMER_LABELS: tuple[ConsumerLabel, ...] = ("tenant", "principal", "agent")
OTHER = "(other)"
_MAX_LABEL = 128


class ConsumerMetrics:
    """`colonnade_consumer_calls_total` and `colonnade_consumer_call_seconds_total`."""

    def __init__(
        self,
        registry: CollectorRegistry,
        labels: Sequence[ConsumerLabel] = ("tenant",),
        *,
        max_values: int = 100,
    ) -> None:
        self.labels = tuple(label for label in CONSUMER_LABELS if label in labels)
        self.max_values = max_values
        names = ["tool", "version", "status", *self.labels]
        self.calls = Counter(
            "colonnade_consumer_calls",
            "Finished tool calls by tool, tool version, outcome status and the consumer labels configured.",
            names,
            registry=registry,
        )
        self.seconds = Counter(
            "colonnade_consumer_call_seconds",
            "Time spent in those calls (divide by colonnade_consumer_calls_total for the mean).",
            names,
            registry=registry,
        )
        self._seen: dict[str, set[str]] = {label: set() for label in self.labels}

    def record(
        self, tool: str, version: str, status: str, seconds: float, consumer: dict[ConsumerLabel, str]
    ) -> None:
        values = [
            tool,
            version,
            status,
            *(self._bounded(label, consumer.get(label, "")) for label in self.labels),
        ]
        self.calls.labels(*values).inc()
        self.seconds.labels(*values).inc(seconds)

    def _bounded(self, label: str, value: str) -> str:
        value = value[:_MAX_LABEL]
        seen = self._seen[label]
        if value in seen:
            return value
        if len(seen) >= self.max_values:
            return OTHER
        seen.add(value)
        return value
