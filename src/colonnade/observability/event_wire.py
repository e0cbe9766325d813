"""Trace events as an OTLP `ExportLogsServiceRequest` (protobuf), for `OtlpLogSink`.

Events are few next to spans (two per call, sent in batches from a thread), so the generated
OpenTelemetry protobuf classes are used as they are, not a hand-written encoder as for spans.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from colonnade import __version__
from colonnade.observability.trace_events import TraceEvent

__all__ = ["encode_events"]

_SEVERITY_INFO = 9  # SEVERITY_NUMBER_INFO
_IDS = ("trace_id", "time_unix_nano", "kind")


def encode_events(events: Sequence[TraceEvent], resource: Mapping[str, str]) -> bytes:
    records = [_record(event) for event in events]
    request = ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(
                resource=Resource(attributes=[_pair(key, value) for key, value in resource.items()]),
                scope_logs=[
                    ScopeLogs(
                        scope=InstrumentationScope(name="colonnade.events", version=__version__),
                        log_records=records,
                    )
                ],
            )
        ]
    )
    encoded: bytes = request.SerializeToString()
    return encoded


def _record(event: TraceEvent) -> LogRecord:
    fields = event.to_json()
    attributes = [
        _pair(f"colonnade.{key}", value)
        for key, value in fields.items()
        if key not in _IDS and value is not None
    ]
    record = LogRecord(
        time_unix_nano=event.time_unix_nano,
        observed_time_unix_nano=event.time_unix_nano,
        severity_number=_SEVERITY_INFO,  # type: ignore[arg-type]
        severity_text="INFO",
        event_name=event.kind,
        body=AnyValue(string_value=event.kind),
        attributes=attributes,
    )
    trace_id = event.trace_id
    if trace_id is not None:
        # A caller's own trace id that is not W3C hex stays an attribute only.
        if len(trace_id) == 32:
            with contextlib.suppress(ValueError):
                record.trace_id = bytes.fromhex(trace_id)
        record.attributes.append(_pair("colonnade.trace_id", trace_id))
    return record


def _pair(key: str, value: object) -> KeyValue:
    return KeyValue(key=key, value=_value(value))


def _value(value: object) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, (tuple, list)):
        from opentelemetry.proto.common.v1.common_pb2 import ArrayValue

        return AnyValue(array_value=ArrayValue(values=[_value(item) for item in value]))
    return AnyValue(string_value=str(value))
