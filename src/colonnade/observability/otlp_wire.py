"""Spans as an OTLP `ExportTraceServiceRequest` in protobuf bytes, written directly.

The OpenTelemetry SDK's encoder builds a protobuf object per span, attribute and value before it
serialises them; writing the wire format straight from the spans is several times cheaper, and the
export thread shares the interpreter with the calls. Field numbers follow
`opentelemetry/proto/trace/v1/trace.proto` and `common/v1/common.proto`; the tests decode the
result with the OpenTelemetry protobuf definitions.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

__all__ = ["encode_spans"]

_IS_REMOTE_KNOWN = 0x100  # SpanFlags: the parent's remoteness is known ...
_IS_REMOTE = 0x200  # ... and it is remote
# Most attributes repeat from span to span (tool names, versions, outcomes): their bytes are kept.
_PAIRS: dict[tuple[int, str, type, object], bytes] = {}
_MAX_PAIRS = 4096


def _long_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Tags, lengths and enum values are nearly always under 2**14: their bytes are looked up, not built.
_SHORT_VARINTS = tuple(_long_varint(value) for value in range(1 << 14))


def _varint(value: int) -> bytes:
    return _SHORT_VARINTS[value] if value < 16384 else _long_varint(value)


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
_FIXED64 = struct.Struct("<Q").pack
_FIXED32 = struct.Struct("<I").pack


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (strings, bytes, messages)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _text(number: int, value: str) -> bytes:
    return _field(number, value.encode("utf-8")) if value else b""


def _any_value(value: object) -> bytes:
    if isinstance(value, bool):
        return _varint(2 << 3) + (b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return _varint(3 << 3) + _varint(value & 0xFFFFFFFFFFFFFFFF)
    if isinstance(value, float):
        return _varint(4 << 3 | 1) + struct.pack("<d", value)
    if isinstance(value, str):
        return _field(1, value.encode("utf-8"))
    if isinstance(value, (tuple, list)):
        return _field(5, b"".join(_field(1, _any_value(item)) for item in value))
    return _field(1, str(value).encode("utf-8"))


def _attributes(number: int, attributes: Mapping[str, object] | None) -> bytes:
    if not attributes:
        return b""
    out = []
    for key, value in attributes.items():
        cache_key = (number, key, type(value), value) if isinstance(value, (str, int, float)) else None
        encoded = _PAIRS.get(cache_key) if cache_key is not None else None
        if encoded is None:
            encoded = _field(number, _field(1, key.encode("utf-8")) + _field(2, _any_value(value)))
            if cache_key is not None:
                if len(_PAIRS) >= _MAX_PAIRS:
                    _PAIRS.clear()
                _PAIRS[cache_key] = encoded
        out.append(encoded)
    return b"".join(out)


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    assert context is not None, "an ended span has a context"
    parent = span.parent
    flags = int(context.trace_flags) | _IS_REMOTE_KNOWN | (_IS_REMOTE if parent and parent.is_remote else 0)
    status = span.status
    code = status.status_code.value
    if code or status.description:
        status_field = _field(
            15, _text(2, status.description or "") + (b"\x18" + _varint(code) if code else b"")
        )
    else:
        status_field = _UNSET_STATUS  # always present, as the SDK sends it (an unset status is empty)
    parts = [
        _TRACE_ID + context.trace_id.to_bytes(16, "big"),
        _SPAN_ID + context.span_id.to_bytes(8, "big"),
        _text(3, context.trace_state.to_header()) if context.trace_state else b"",
        _PARENT_ID + parent.span_id.to_bytes(8, "big") if parent is not None else b"",
        _text(5, span.name),
        _KIND + _varint(span.kind.value + 1),  # OTLP counts from UNSPECIFIED = 0
        _START + _FIXED64(span.start_time or 0),
        _END + _FIXED64(span.end_time or 0),
        _attributes(9, span.attributes),
        _varint(10 << 3) + _varint(span.dropped_attributes) if span.dropped_attributes else b"",
        b"".join(_field(11, _event(event.timestamp, event.name, event.attributes)) for event in span.events),
        status_field,
        _FLAGS + _FIXED32(flags),
    ]
    return b"".join(parts)


def _event(timestamp: int, name: str, attributes: Mapping[str, object] | None) -> bytes:
    return _varint(1 << 3 | 1) + struct.pack("<Q", timestamp) + _text(2, name) + _attributes(3, attributes)


def _scope(scope: InstrumentationScope | None) -> bytes:
    if scope is None:
        return b""
    return _text(1, scope.name) + _text(2, scope.version or "")


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
        _field(1, _resource_spans(resource, scopes.values())) for resource, scopes in by_resource.values()
    )


def _resource_spans(
    resource: Resource, scopes: Iterable[tuple[InstrumentationScope | None, list[bytes]]]
) -> bytes:
    body = _field(1, _attributes(1, resource.attributes))
    for scope, encoded in scopes:
        scope_spans = _field(1, _scope(scope)) + b"".join(_field(2, span) for span in encoded)
        if scope is not None and scope.schema_url:
            scope_spans += _text(3, scope.schema_url)
        body += _field(2, scope_spans)
    return body + _text(3, resource.schema_url)
