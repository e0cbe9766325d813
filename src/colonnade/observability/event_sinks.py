"""The sinks of trace events: a JSONL file, the log, OTLP logs. Each writes from its own thread.

A sink is a bounded queue and a daemon thread that takes what is queued in batches: an event on the
hot path costs a lock and an append. When the queue is full (a slow disk, a collector that is down)
new events are dropped and counted. `close()` writes what is left, waiting at most two seconds.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from colonnade.observability.logging import emit_event
from colonnade.observability.trace_events import TraceEvent

__all__ = ["JsonlSink", "LogSink", "OtlpLogSink"]

logger = logging.getLogger(__name__)

EVENTS_LOGGER = "colonnade.events"
_CLOSE_WAIT_S = 2.0


class _ThreadedSink(ABC):
    """A bounded queue drained by one daemon thread in batches of at most `batch` events."""

    name = "sink"

    def __init__(self, *, max_queue: int = 10_000, batch: int = 512, interval_s: float = 0.5) -> None:
        self._queue: deque[TraceEvent] = deque()
        self._max_queue = max_queue
        self._batch = batch
        self._interval_s = interval_s
        self._wake = threading.Condition()
        self._closed = False
        self.written = 0
        self.dropped = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._drain, name=f"colonnade-events-{self.name}", daemon=True)
        self._thread.start()

    def put(self, event: TraceEvent) -> None:
        with self._wake:
            if len(self._queue) >= self._max_queue or self._closed:
                self.dropped += 1
                return
            self._queue.append(event)
            if len(self._queue) >= self._batch:
                self._wake.notify()

    def status(self) -> dict[str, Any]:
        return {"sink": self.name, "written": self.written, "dropped": self.dropped, "failed": self.failed}

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(_CLOSE_WAIT_S)

    def _drain(self) -> None:
        while True:
            with self._wake:
                if not self._queue and not self._closed:
                    self._wake.wait(self._interval_s)
                batch = [self._queue.popleft() for _ in range(min(self._batch, len(self._queue)))]
                done = self._closed and not self._queue
            if batch:
                try:
                    self._write(batch)
                    self.written += len(batch)
                except Exception:  # a sink's failure is counted and logged, never raised into a call
                    self.failed += len(batch)
                    logger.warning("trace events sink %s failed to write %d events", self.name, len(batch))
            if done:
                self._finish()
                return

    @abstractmethod
    def _write(self, batch: Sequence[TraceEvent]) -> None:
        """Write one batch (in the sink's thread); an exception counts the batch as failed."""

    def _finish(self) -> None:
        """Release what the sink holds, after its last batch (most hold nothing)."""
        return None


class JsonlSink(_ThreadedSink):
    """One JSON object per line, appended to `path` (the folder is created)."""

    name = "jsonl"

    def __init__(self, path: Path, **options: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = path.open("ab")
        super().__init__(**options)

    def _write(self, batch: Sequence[TraceEvent]) -> None:
        self._file.write(b"".join(orjson.dumps(event.to_json()) + b"\n" for event in batch))
        self._file.flush()

    def _finish(self) -> None:
        self._file.close()

    def status(self) -> dict[str, Any]:
        return {**super().status(), "path": str(self.path)}


class LogSink(_ThreadedSink):
    """Each event as a line of the gateway's log (logger `colonnade.events`, level info)."""

    name = "log"

    def _write(self, batch: Sequence[TraceEvent]) -> None:
        for event in batch:
            fields = event.to_json()
            kind = fields.pop("kind")
            emit_event(logging.INFO, EVENTS_LOGGER, kind, fields)


class OtlpLogSink(_ThreadedSink):
    """Events as OTLP log records (`event_name` = the kind, attributes = the fields) over HTTP/protobuf."""

    name = "otlp"

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        resource: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        import requests

        self.url = url
        self._session = requests.Session()
        self._session.headers.update({"Content-Type": "application/x-protobuf", **(headers or {})})
        self._timeout_s = timeout_s
        self._resource = dict(resource or {})
        super().__init__(**options)

    def _write(self, batch: Sequence[TraceEvent]) -> None:
        from colonnade.observability.event_wire import encode_events

        response = self._session.post(
            self.url, data=encode_events(batch, self._resource), timeout=self._timeout_s
        )
        if response.status_code >= 300:
            raise RuntimeError(f"collector answered {response.status_code}")

    def _finish(self) -> None:
        self._session.close()

    def status(self) -> dict[str, Any]:
        return {**super().status(), "url": self.url}
