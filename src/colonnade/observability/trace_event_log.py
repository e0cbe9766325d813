"""Where trace events go: the last N kept in memory (for `/v1/status` and the events page), and sinks.

`emit()` is on the hot path (two per call): it appends to a bounded deque and hands the event to
each sink's bounded queue; it never blocks and never raises. Sinks write in a daemon thread each:
a JSONL file, the log, OTLP logs. A sink that cannot keep up drops events and counts them (shown
in the status), as the span export does.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Iterable
from typing import Any, Protocol

from colonnade.config import TelemetrySettings
from colonnade.observability.trace_events import TraceEvent

__all__ = ["EventSink", "TraceEventLog", "build_event_log"]


class EventSink(Protocol):
    name: str

    def put(self, event: TraceEvent) -> None:
        """Take one event without blocking (drop and count it when full)."""
        ...

    def status(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class TraceEventLog:
    """The gateway's trace events: `emit(event)`, `recent(...)`, `status()`."""

    def __init__(self, keep: int = 1000, sinks: Iterable[EventSink] = ()) -> None:
        self._recent: deque[TraceEvent] = deque(maxlen=keep)
        self._counts: Counter[str] = Counter()
        self._sinks = tuple(sinks)
        self._lock = threading.Lock()  # the downstream supervisors emit from their tasks, readers copy

    def emit(self, event: TraceEvent) -> None:
        with self._lock:
            self._recent.append(event)
            self._counts[event.kind] += 1
        for sink in self._sinks:
            sink.put(event)

    def recent(
        self,
        *,
        kind: str | None = None,
        trace_id: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[TraceEvent]:
        """The newest events first, filtered; at most `limit`."""
        with self._lock:
            events = list(self._recent)
        found: list[TraceEvent] = []
        for event in reversed(events):
            if kind is not None and event.kind != kind:
                continue
            if trace_id is not None and event.trace_id != trace_id:
                continue
            if session_id is not None and event.session_id != session_id:
                continue
            found.append(event)
            if len(found) >= limit:
                break
        return found

    def status(self) -> dict[str, Any]:
        with self._lock:
            kept, counts = len(self._recent), dict(self._counts)
        return {
            "kept": kept,
            "keep": self._recent.maxlen,
            "emitted_by_kind": counts,
            "sinks": [sink.status() for sink in self._sinks],
        }

    def close(self) -> None:
        for sink in self._sinks:
            sink.close()


def build_event_log(settings: TelemetrySettings) -> TraceEventLog | None:
    """The event log `telemetry:` asks for; None when it keeps nothing and has no sink (no cost per call)."""
    from colonnade.observability.event_sinks import JsonlSink, LogSink, OtlpLogSink

    sinks: list[EventSink] = []
    if settings.events_jsonl is not None:
        sinks.append(JsonlSink(settings.events_jsonl))
    if settings.events_log:
        sinks.append(LogSink())
    url = settings.logs_url
    if settings.events_otlp and url is not None:
        resource = {"service.name": settings.service_name, **settings.resource_attributes}
        sinks.append(
            OtlpLogSink(
                url, headers=settings.otlp_headers, timeout_s=settings.otlp_timeout_s, resource=resource
            )
        )
    if settings.events_keep == 0 and not sinks:
        return None
    return TraceEventLog(keep=settings.events_keep, sinks=sinks)
