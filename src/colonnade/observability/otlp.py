"""OTLP export of one gateway's spans (HTTP/protobuf), bounded so a collector costs calls nothing.

Spans go through `BoundedSpanExport`: a call's span is put on a bounded queue (a lock and an append)
and a daemon thread sends batches. When the collector is slow or down the queue fills and further
spans are dropped and counted, never waited for; a batch the collector refused is counted as dropped
too. `ExportCounters` holds those numbers, which `/metrics` shows as
`colonnade_telemetry_spans_dropped_total`.

Metrics go out through `otlp_metrics.MetricsPush`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import requests
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from colonnade import __version__
from colonnade.config import TelemetrySettings
from colonnade.observability.otlp_wire import encode_spans

__all__ = ["BoundedSpanExport", "ExportCounters", "OtlpHttpSpanExporter", "otlp_span_exporter"]

logger = logging.getLogger(__name__)

_SHUTDOWN_WAIT_S = 2.0  # a stopping gateway waits this long for its last spans, then leaves them
_WARN_EVERY_S = 60.0


@dataclass
class ExportCounters:
    """Spans handed to the collector, and spans lost: queue full, or a batch the collector did not take."""

    exported: int = 0
    dropped_queue_full: int = 0
    dropped_export_failed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def dropped(self) -> int:
        return self.dropped_queue_full + self.dropped_export_failed

    def add(self, *, exported: int = 0, queue_full: int = 0, export_failed: int = 0) -> None:
        with self._lock:
            self.exported += exported
            self.dropped_queue_full += queue_full
            self.dropped_export_failed += export_failed


class BoundedSpanExport(SpanProcessor):
    """Ended spans on a bounded queue, sent in batches by a daemon thread; a full queue drops, never waits."""

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        max_queue_size: int = 2048,
        max_export_batch_size: int = 512,
        schedule_delay_s: float = 5.0,
        counters: ExportCounters | None = None,
    ) -> None:
        self.exporter = exporter
        self.counters = counters if counters is not None else ExportCounters()
        self._max_queue = max_queue_size
        self._batch = max_export_batch_size
        self._delay_s = schedule_delay_s
        self._queue: deque[ReadableSpan] = deque()
        self._lock = threading.Lock()
        self._export_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="colonnade-otlp-spans", daemon=True)
        self._thread.start()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        if self._stopping or not span.context.trace_flags.sampled:
            return
        with self._lock:
            if len(self._queue) >= self._max_queue:
                self.counters.add(queue_full=1)
                return
            self._queue.append(span)
            full = len(self._queue) >= self._batch
        if full:
            self._wake.set()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._export_all()
        return True

    def shutdown(self) -> None:
        self._stopping = True
        self._wake.set()
        self._thread.join(_SHUTDOWN_WAIT_S)
        with self._lock:
            left = len(self._queue)
            self._queue.clear()
        if left:
            self.counters.add(export_failed=left)
        self.exporter.shutdown()

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait(self._delay_s)
            self._wake.clear()
            self._export_all()
        self._export_all()

    def _export_all(self) -> None:
        """Send the spans queued now, in batches; spans ended meanwhile wait for the next turn (else a
        steady trickle would be sent as a stream of tiny requests)."""
        with self._export_lock:
            with self._lock:
                left = len(self._queue)
            while left > 0 and (batch := self._take(min(left, self._batch))):
                left -= len(batch)
                try:
                    result = self.exporter.export(batch)
                except Exception:  # an exporter's bug must not end the thread: the batch is counted lost
                    logger.exception("span export raised")
                    result = SpanExportResult.FAILURE
                if result is SpanExportResult.SUCCESS:
                    self.counters.add(exported=len(batch))
                else:
                    self.counters.add(export_failed=len(batch))

    def _take(self, most: int) -> list[ReadableSpan]:
        with self._lock:
            return [self._queue.popleft() for _ in range(min(most, len(self._queue)))]


class OtlpHttpSpanExporter(SpanExporter):
    """Spans to an OTLP/HTTP receiver, encoded by `otlp_wire` (a third of the SDK encoder's CPU).

    One POST per batch and no retry: a batch the receiver does not take is dropped and counted by
    the caller (`BoundedSpanExport`), so a collector that is down never holds spans back or the
    export thread in backoff.
    """

    def __init__(self, url: str, *, headers: Mapping[str, str], timeout_s: float) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._failures = 0
        self._warned_at = 0.0
        self._session = requests.Session()
        self._session.headers.update(
            {"Content-Type": "application/x-protobuf", "User-Agent": f"colonnade/{__version__}", **headers}
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            answer = self._session.post(self.url, data=encode_spans(spans), timeout=self.timeout_s)
        except requests.RequestException as exc:
            return self._failed(f"failed ({type(exc).__name__})")
        if answer.status_code // 100 != 2:
            return self._failed(f"refused (HTTP {answer.status_code})")
        self._failures = 0
        return SpanExportResult.SUCCESS

    def _failed(self, why: str) -> SpanExportResult:
        """A warning for the first failure and then at most one a minute: a collector that is down
        must not flood the log (`colonnade_telemetry_spans_dropped_total` counts every span)."""
        self._failures += 1
        now = time.monotonic()
        if self._failures == 1 or now - self._warned_at >= _WARN_EVERY_S:
            self._warned_at = now
            logger.warning(
                "span export to %s %s; %d export(s) failed in a row", self.url, why, self._failures
            )
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._session.close()


def otlp_span_exporter(settings: TelemetrySettings) -> OtlpHttpSpanExporter | None:
    """The OTLP/HTTP span exporter the settings ask for; None when traces are not exported."""
    url = settings.traces_url
    if url is None or not settings.traces:
        return None
    return OtlpHttpSpanExporter(url, headers=settings.otlp_headers, timeout_s=settings.otlp_timeout_s)
