"""The Prometheus registry pushed as OTLP metrics (HTTP/protobuf): a collector gets what `/metrics` shows.

`MetricsPush` converts a snapshot of the registry every `metrics_interval_s`, on a daemon thread:
counters become monotonic cumulative sums, gauges stay gauges, histograms keep their buckets. There
is one source of numbers, scraped or pushed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Gauge,
    Histogram,
    HistogramDataPoint,
    Metric,
    MetricExporter,
    MetricsData,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
    Sum,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric as PromMetric
from prometheus_client.samples import Sample

from colonnade import __version__
from colonnade.config import TelemetrySettings

__all__ = ["MetricsPush", "otlp_metric_exporter"]

logger = logging.getLogger(__name__)

# OTLP's min and max are optional and Prometheus histograms keep neither: None leaves them unset.
_UNKNOWN = cast(float, None)
_SHUTDOWN_WAIT_S = 2.0


def otlp_metric_exporter(settings: TelemetrySettings) -> OTLPMetricExporter | None:
    """The OTLP/HTTP metric exporter the settings ask for; None when metrics are not exported."""
    url = settings.metrics_url
    if url is None or not settings.metrics:
        return None
    return OTLPMetricExporter(endpoint=url, headers=settings.otlp_headers, timeout=settings.otlp_timeout_s)


class MetricsPush:
    """Every `interval_s`, the Prometheus registry as OTLP metrics (cumulative), from a daemon thread."""

    def __init__(
        self, registry: CollectorRegistry, exporter: MetricExporter, resource: Resource, *, interval_s: float
    ) -> None:
        self.registry = registry
        self.exporter = exporter
        self.resource = resource
        self.interval_s = interval_s
        self.pushed = 0
        self.failed = 0
        self._start_ns = time.time_ns()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="colonnade-otlp-metrics", daemon=True)
        self._thread.start()

    def push(self) -> bool:
        """One export now; whether the collector took it."""
        try:
            ok = self.exporter.export(self.snapshot()).name == "SUCCESS"
        except Exception:  # a failing export is counted; the next interval tries again
            logger.exception("metric export raised")
            ok = False
        if ok:
            self.pushed += 1
        else:
            self.failed += 1
        return ok

    def snapshot(self) -> MetricsData:
        now = time.time_ns()
        metrics = [
            m for family in self.registry.collect() for m in _otlp_metrics(family, self._start_ns, now)
        ]
        scope = InstrumentationScope("colonnade", __version__)
        return MetricsData([ResourceMetrics(self.resource, [ScopeMetrics(scope, metrics, "")], "")])

    def shutdown(self) -> None:
        self._stop.set()
        self._thread.join(_SHUTDOWN_WAIT_S)
        self.exporter.shutdown()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.push()


def _otlp_metrics(family: PromMetric, start_ns: int, now_ns: int) -> Iterable[Metric]:
    """One Prometheus family as OTLP data: counters as monotonic sums, gauges, histograms with buckets."""
    if family.type == "counter":
        points = [
            NumberDataPoint(dict(s.labels), start_ns, now_ns, s.value)
            for s in family.samples
            if s.name.endswith("_total")
        ]
        cumulative = AggregationTemporality.CUMULATIVE
        yield Metric(family.name, family.documentation, "", Sum(points, cumulative, is_monotonic=True))
    elif family.type == "gauge":
        points = [NumberDataPoint(dict(s.labels), start_ns, now_ns, s.value) for s in family.samples]
        yield Metric(family.name, family.documentation, "", Gauge(points))
    elif family.type == "histogram":
        yield Metric(
            family.name,
            family.documentation,
            "s" if family.name.endswith("_seconds") else "",
            Histogram(_histogram_points(family.samples, start_ns, now_ns), AggregationTemporality.CUMULATIVE),
        )


@dataclass
class _Series:
    buckets: list[tuple[float, float]] = field(default_factory=list)
    total: float = 0.0
    count: int = 0


def _histogram_points(samples: Sequence[Sample], start_ns: int, now_ns: int) -> list[HistogramDataPoint]:
    """Prometheus' cumulative `le` buckets become OTLP's per-bucket counts with explicit bounds."""
    series: dict[tuple[tuple[str, str], ...], _Series] = {}
    for sample in samples:
        labels = dict(sample.labels)
        bound = labels.pop("le", None)
        entry = series.setdefault(tuple(sorted(labels.items())), _Series())
        if sample.name.endswith("_bucket") and bound is not None:
            entry.buckets.append((float(bound), sample.value))
        elif sample.name.endswith("_sum"):
            entry.total = sample.value
        elif sample.name.endswith("_count"):
            entry.count = int(sample.value)
    points = []
    for key, entry in series.items():
        ordered = sorted(entry.buckets)
        counts = [int(total - (ordered[i - 1][1] if i else 0.0)) for i, (_, total) in enumerate(ordered)]
        bounds = [bound for bound, _ in ordered if bound != float("inf")]
        points.append(
            HistogramDataPoint(
                dict(key), start_ns, now_ns, entry.count, entry.total, counts, bounds, _UNKNOWN, _UNKNOWN
            )
        )
    return points
