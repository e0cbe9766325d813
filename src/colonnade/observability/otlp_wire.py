"""Spans as an OTLP `ExportTraceServiceRequest` in protobuf bytes, written directly.

The OpenTelemetry SDK's encoder builds a protobuf object per span, attribute and value before it
serialises them; writing the wire format straight from the spans is several times cheaper, and the
export thread shares the interpreter with the calls. Field numbers follow
`opentelemetry/proto/trace/v1/trace.proto` and `common/v1/common.proto`; the tests decode the
result with the OpenTelemetry protobuf definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from colonnade.observability.protobuf_wire import FIXED32, FIXED64, attributes, field, text, varint

__all__ = ["encode_spans"]

_IS_REMOTE_KNOWN = 0x100  # SpanFlags: the parent's remoteness is known ...
_IS_REMOTE = 0x200  # ... and it is remote
# The span's fixed-shape fields, tag (and length) bytes written once: ids (fields 1, 2, 4; 16 and
# 8 bytes), kind (6, varint), start and end (7, 8: fixed64), flags (16: fixed32), an unset status (15).
_TRACE_ID = b"\x0a\x10"
_SPAN_ID = b"\x12\x08"
_PARENT_ID = b"\x22\x08"
_KIND = b"\x30"
_START = b"\x39"
_END = b"\x41"
_FLAGS = b"\x85\x01"
_UNSET_STATUS = b"\x7a\x00"


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    assert context is not None, "an ended span has a context"
    parent = span.parent
    flags = int(context.trace_flags) | _IS_REMOTE_KNOWN | (_IS_REMOTE if parent and parent.is_remote else 0)
    status = span.status
    code = status.status_code.value
    if code or status.description:
        status_field = field(
            15, text(2, status.description or "") + (b"\x18" + varint(code) if code else b"")
        )
    else:
        status_field = _UNSET_STATUS  # always present, as the SDK sends it (an unset status is empty)
    parts = [
        _TRACE_ID + context.trace_id.to_bytes(16, "big"),
        _SPAN_ID + context.span_id.to_bytes(8, "big"),
        text(3, context.trace_state.to_header()) if context.trace_state else b"",
        _PARENT_ID + parent.span_id.to_bytes(8, "big") if parent is not None else b"",
        text(5, span.name),
        _KIND + varint(span.kind.value + 1),  # OTLP counts from UNSPECIFIED = 0
        _START + FIXED64(span.start_time or 0),
        _END + FIXED64(span.end_time or 0),
        attributes(9, span.attributes),
        varint(10 << 3) + varint(span.dropped_attributes) if span.dropped_attributes else b"",
        b"".join(field(11, _event(event.timestamp, event.name, event.attributes)) for event in span.events),
        status_field,
        _FLAGS + FIXED32(flags),
    ]
    return b"".join(parts)


def _event(timestamp: int, name: str, pairs: Mapping[str, object] | None) -> bytes:
    return b"\x09" + FIXED64(timestamp) + text(2, name) + attributes(3, pairs)


def _scope(scope: InstrumentationScope | None) -> bytes:
    if scope is None:
        return b""
    return text(1, scope.name) + text(2, scope.version or "")


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The request body of one OTLP/HTTP traces export: spans grouped by resource, then by scope."""
    by_resource: dict[
        int, tuple[Resource, dict[object, tuple[InstrumentationScope | None, list[bytes]]]]
    ] = {}
    for span in spans:
        resource = span.resource
        _, scopes = by_resource.setdefault(id(resource), (resource, {}))
        scope = span.instrumentation_scope
        key = (scope.name, scope.version, scope.schema_url) if scope is not None else None
        scopes.setdefault(key, (scope, []))[1].append(_span(span))
    return b"".join(
        field(1, _resource_spans(resource, scopes.values())) for resource, scopes in by_resource.values()
    )


def _resource_spans(
    resource: Resource, scopes: Iterable[tuple[InstrumentationScope | None, list[bytes]]]
) -> bytes:
    body = field(1, attributes(1, resource.attributes))
    for scope, encoded in scopes:
        scope_spans = field(1, _scope(scope)) + b"".join(field(2, span) for span in encoded)
        if scope is not None and scope.schema_url:
            scope_spans += text(3, scope.schema_url)
        body += field(2, scope_spans)
    return body + text(3, resource.schema_url)
