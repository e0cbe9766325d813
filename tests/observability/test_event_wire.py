"""Trace events written as OTLP logs by hand give the bytes the generated protobuf classes give."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from colonnade import __version__
from colonnade.observability.event_wire import SCOPE_NAME, encode_events
from colonnade.observability.trace_events import (
    CallEnded,
    CallStarted,
    DownstreamDisconnected,
    ToolsListed,
    TraceEvent,
)

RESOURCE = {"service.name": "colonnade", "service.version": __version__, "deployment.environment": "test"}


def _value(value: object) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, (tuple, list)):
        return AnyValue(array_value=ArrayValue(values=[_value(item) for item in value]))
    return AnyValue(string_value=str(value))


def _reference(events: Sequence[TraceEvent], resource: Mapping[str, str]) -> bytes:
    """What the generated classes make of the events (the encoder before it wrote bytes itself)."""
    records = []
    for event in events:
        fields = event.to_json()
        pairs = [
            KeyValue(key=f"colonnade.{key}", value=_value(value))
            for key, value in fields.items()
            if key not in ("trace_id", "time_unix_nano", "kind") and value is not None
        ]
        record = LogRecord(
            time_unix_nano=event.time_unix_nano,
            observed_time_unix_nano=event.time_unix_nano,
            severity_number=9,  # type: ignore[arg-type]
            severity_text="INFO",
            event_name=event.kind,
            body=AnyValue(string_value=event.kind),
            attributes=pairs,
        )
        if event.trace_id is not None:
            if len(event.trace_id) == 32:
                with contextlib.suppress(ValueError):
                    record.trace_id = bytes.fromhex(event.trace_id)
            record.attributes.append(KeyValue(key="colonnade.trace_id", value=_value(event.trace_id)))
        records.append(record)
    request = ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(
                resource=Resource(attributes=[KeyValue(key=k, value=_value(v)) for k, v in resource.items()]),
                scope_logs=[
                    ScopeLogs(
                        scope=InstrumentationScope(name=SCOPE_NAME, version=__version__), log_records=records
                    )
                ],
            )
        ]
    )
    encoded: bytes = request.SerializeToString()
    return encoded


def _events() -> list[TraceEvent]:
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    return [
        CallStarted(
            trace_id=trace, request_id="c-1", tool_id="acme:crm:get_customer", fn="get", tenant="acme"
        ),
        CallEnded(
            trace_id=trace,
            request_id="c-1",
            session_id="s-9",
            tool="acme:crm:get_customer",
            version="1.2.0",
            status="terminal_error",
            code="S-TOOL-UPSTREAM",
            duration_ms=12.5,
        ),
        ToolsListed(
            trace_id="not-w3c-hex",
            query="refund an order",
            selected=("acme:billing:refund", "acme:billing:get_invoice"),
            confidence=0.82,
            fallback_used=False,
            duration_ms=3.0,
        ),
        DownstreamDisconnected(server="echo", reason="idle"),
        CallEnded(
            trace_id="zz" * 16, tool=None, version=None, status="cancelled", code=None, duration_ms=100000.25
        ),
    ]


def test_the_bytes_are_the_generated_classes_bytes() -> None:
    events = _events()
    assert encode_events(events, RESOURCE) == _reference(events, RESOURCE)


def test_the_bytes_decode_to_the_events() -> None:
    events = _events()
    decoded = ExportLogsServiceRequest.FromString(encode_events(events, RESOURCE))
    (resource_logs,) = decoded.resource_logs
    (scope_logs,) = resource_logs.scope_logs
    assert scope_logs.scope.name == SCOPE_NAME
    records = scope_logs.log_records
    assert [record.event_name for record in records] == [event.kind for event in events]
    assert records[0].trace_id == bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
    assert records[2].trace_id == b""  # not W3C hex: an attribute only
    attributes = {pair.key: pair.value for pair in records[2].attributes}
    assert attributes["colonnade.trace_id"].string_value == "not-w3c-hex"
    assert [v.string_value for v in attributes["colonnade.selected"].array_value.values] == [
        "acme:billing:refund",
        "acme:billing:get_invoice",
    ]
    assert attributes["colonnade.fallback_used"].bool_value is False


def test_no_events_make_an_empty_scope() -> None:
    assert encode_events([], RESOURCE) == _reference([], RESOURCE)
