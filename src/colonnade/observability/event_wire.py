"""Trace events as an OTLP `ExportLogsServiceRequest` (protobuf bytes), written directly, for `OtlpLogSink`.

A call makes two events (started, ended), as many as spans, so they are written with the same wire
primitives as spans (`protobuf_wire`) rather than through the generated protobuf classes, which
cost about twice as much CPU per event. Fields are written in field-number order, so the bytes are
the ones the generated classes give (the tests compare them). Field numbers follow
`opentelemetry/proto/logs/v1/logs.proto` and `collector/logs/v1/logs_service.proto`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields

from colonnade import __version__
from colonnade.observability.protobuf_wire import FIXED64, attributes, field, text
from colonnade.observability.trace_events import TraceEvent

__all__ = ["SCOPE_NAME", "encode_events"]

SCOPE_NAME = "colonnade.events"
_IDS = frozenset({"trace_id", "time_unix_nano", "kind"})
# LogRecord: time (1, fixed64), severity number INFO = 9 (2, varint) and text (3), observed time (11).
_TIME = b"\x09"
_SEVERITY = b"\x10\x09" + text(3, "INFO")
_OBSERVED = b"\x59"
_TRACE_ID = b"\x4a\x10"
_SCOPE = field(1, text(1, SCOPE_NAME) + text(2, __version__))
# The attribute names of each event class, prefixed once: (field, "colonnade.<field>").
_NAMES: dict[type, tuple[tuple[str, str], ...]] = {}


def encode_events(events: Sequence[TraceEvent], resource: Mapping[str, str]) -> bytes:
    """The body of one OTLP/HTTP logs export: one resource, one scope, a log record per event."""
    scope_logs = _SCOPE + b"".join(field(2, _record(event)) for event in events)
    resource_logs = field(1, attributes(1, resource)) + field(2, scope_logs)
    return field(1, resource_logs)


def _names(event: TraceEvent) -> tuple[tuple[str, str], ...]:
    names = _NAMES.get(type(event))
    if names is None:
        names = _NAMES[type(event)] = tuple(
            (item.name, f"colonnade.{item.name}") for item in fields(event) if item.name not in _IDS
        )
    return names


def _record(event: TraceEvent) -> bytes:
    pairs: dict[str, object] = {}
    for name, key in _names(event):
        value = getattr(event, name)
        if value is not None:
            pairs[key] = value
    trace_id = event.trace_id
    trace_bytes = b""
    if trace_id is not None:
        # A caller's own trace id that is not W3C hex stays an attribute only.
        if len(trace_id) == 32:
            try:
                trace_bytes = _TRACE_ID + bytes.fromhex(trace_id)
            except ValueError:
                trace_bytes = b""
        pairs["colonnade.trace_id"] = trace_id
    stamp = FIXED64(event.time_unix_nano)
    kind = event.kind
    return b"".join(
        (
            _TIME + stamp,
            _SEVERITY,
            field(5, text(1, kind)),  # body: the kind, as a string AnyValue
            attributes(6, pairs),
            trace_bytes,
            _OBSERVED + stamp,
            text(12, kind),  # event_name
        )
    )
