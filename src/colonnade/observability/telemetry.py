"""What one gateway exports, built from its `telemetry:` settings: spans and metrics over OTLP, or nothing.

Without an endpoint the tracer provider records no spans (ids still propagate) and nothing leaves the
process. With one, spans go through the bounded export (`otlp.BoundedSpanExport`) and the Prometheus
registry is pushed as OTLP metrics; the export's own counters join that registry, so `/metrics` shows
how many spans were sent and dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from colonnade.config import TelemetrySettings
from colonnade.observability.tracing import build_tracer_provider, resource_for, sampler_for

if TYPE_CHECKING:  # the exporters (requests, protobuf) are imported only when a collector is configured
    from colonnade.observability.otlp import BoundedSpanExport, ExportCounters
    from colonnade.observability.otlp_metrics import MetricsPush

__all__ = ["Telemetry"]


@dataclass
class Telemetry:
    """A gateway's tracer provider, the span export's counters and the metrics push (each when configured)."""

    tracer_provider: TracerProvider
    spans: BoundedSpanExport | None = None
    metrics_push: MetricsPush | None = None

    @classmethod
    def build(cls, settings: TelemetrySettings, registry: CollectorRegistry) -> Telemetry:
        if settings.traces_url is None and settings.metrics_url is None:
            return cls(build_tracer_provider(resource=resource_for(settings)))
        from colonnade.observability.otlp import BoundedSpanExport, otlp_span_exporter
        from colonnade.observability.otlp_metrics import MetricsPush, otlp_metric_exporter

        resource = resource_for(settings)
        span_exporter = otlp_span_exporter(settings)
        spans = None
        if span_exporter is not None:
            spans = BoundedSpanExport(
                span_exporter,
                max_queue_size=settings.max_queue_size,
                max_export_batch_size=settings.max_export_batch_size,
                schedule_delay_s=settings.schedule_delay_s,
            )
            registry.register(_ExportCollector(spans.counters))
        provider = build_tracer_provider(processor=spans, sampler=sampler_for(settings), resource=resource)
        metric_exporter = otlp_metric_exporter(settings)
        push = None
        if metric_exporter is not None:
            push = MetricsPush(registry, metric_exporter, resource, interval_s=settings.metrics_interval_s)
        return cls(provider, spans, push)

    @property
    def counters(self) -> ExportCounters | None:
        return self.spans.counters if self.spans is not None else None

    def shutdown(self) -> None:
        """Send what is queued (a collector that is down is waited for briefly), then stop the threads."""
        if self.metrics_push is not None:
            self.metrics_push.push()
            self.metrics_push.shutdown()
        self.tracer_provider.shutdown()


class _ExportCollector(Collector):
    """The span export's counters as Prometheus series."""

    def __init__(self, counters: ExportCounters) -> None:
        self.counters = counters

    def collect(self) -> Iterator[Metric]:
        exported = CounterMetricFamily(
            "colonnade_telemetry_spans_exported", "Spans the OTLP collector accepted."
        )
        exported.add_metric([], self.counters.exported)
        yield exported
        dropped = CounterMetricFamily(
            "colonnade_telemetry_spans_dropped",
            "Spans never delivered: the export queue was full, or the collector did not take the batch.",
            labels=["reason"],
        )
        dropped.add_metric(["queue_full"], self.counters.dropped_queue_full)
        dropped.add_metric(["export_failed"], self.counters.dropped_export_failed)
        yield dropped
