"""A real OTLP/HTTP receiver on loopback: it decodes what arrives with the OpenTelemetry protobuf definitions.

It stands in for an OpenTelemetry Collector: `POST /v1/traces`, `/v1/metrics` and `/v1/logs` take protobuf
bodies (`application/x-protobuf`), as the OTLP specification says, and answer with the matching
export response. Each request's headers are kept, so a test can check `OTEL_EXPORTER_OTLP_HEADERS`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.loopback import serve_in_thread

__all__ = ["OtlpReceiver", "attributes_of", "otlp_receiver", "until"]

_PROTOBUF = "application/x-protobuf"
_POLL_S = 0.02


@dataclass
class OtlpReceiver:
    url: str = ""
    traces: list[ExportTraceServiceRequest] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    logs: list[ExportLogsServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def spans(self) -> list[Span]:
        with self._lock:
            return [
                span
                for request in self.traces
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]

    def metric_names(self) -> set[str]:
        with self._lock:
            return {
                metric.name
                for request in self.metrics
                for resource in request.resource_metrics
                for scope in resource.scope_metrics
                for metric in scope.metrics
            }

    def log_records(self) -> list[LogRecord]:
        with self._lock:
            return [
                record
                for request in self.logs
                for resource in request.resource_logs
                for scope in resource.scope_logs
                for record in scope.log_records
            ]

    async def wait_for_spans(self, count: int, timeout_s: float = 10.0) -> list[Span]:
        await until(lambda: len(self.spans()) >= count, timeout_s)
        return self.spans()

    async def _traces(self, request: Request) -> Response:
        body = await request.body()
        decoded = ExportTraceServiceRequest.FromString(body)
        with self._lock:
            self.traces.append(decoded)
            self.raw.append(body)
            self.headers.append(dict(request.headers))
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type=_PROTOBUF)

    async def _metrics(self, request: Request) -> Response:
        body = await request.body()
        decoded = ExportMetricsServiceRequest.FromString(body)
        with self._lock:
            self.metrics.append(decoded)
            self.raw.append(body)
            self.headers.append(dict(request.headers))
        return Response(ExportMetricsServiceResponse().SerializeToString(), media_type=_PROTOBUF)

    async def _logs(self, request: Request) -> Response:
        body = await request.body()
        decoded = ExportLogsServiceRequest.FromString(body)
        with self._lock:
            self.logs.append(decoded)
            self.raw.append(body)
            self.headers.append(dict(request.headers))
        return Response(ExportLogsServiceResponse().SerializeToString(), media_type=_PROTOBUF)


async def until(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Whether `check` came true within `timeout_s` (the export runs on threads of its own)."""
    for _ in range(int(timeout_s / _POLL_S)):
        if check():
            return True
        await asyncio.sleep(_POLL_S)
    return check()


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    app = Starlette(
        routes=[
            Route("/v1/traces", receiver._traces, methods=["POST"]),
            Route("/v1/metrics", receiver._metrics, methods=["POST"]),
            Route("/v1/logs", receiver._logs, methods=["POST"]),
        ]
    )
    with serve_in_thread(app) as url:
        receiver.url = url
        yield receiver


def attributes_of(item: Span | LogRecord) -> dict[str, object]:
    """A decoded span's or log record's attributes as plain values."""
    return {pair.key: _value(pair.value) for pair in item.attributes}


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None
