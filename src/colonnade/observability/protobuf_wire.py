"""Protobuf wire primitives for the OTLP encoders (spans: `otlp_wire`, trace events: `event_wire`).

Writing the wire format straight from the gateway's records is several times cheaper than building
the generated protobuf objects first, and the export threads share the interpreter with the calls.
Values and key-value pairs follow `opentelemetry/proto/common/v1/common.proto`.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

__all__ = ["FIXED32", "FIXED64", "any_value", "attributes", "field", "text", "varint"]

FIXED64 = struct.Struct("<Q").pack
FIXED32 = struct.Struct("<I").pack
_DOUBLE = struct.Struct("<d").pack
# Most attributes repeat from record to record (tool names, versions, outcomes): their bytes are kept.
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


def varint(value: int) -> bytes:
    """A base-128 varint (tags, lengths, integers; negative ints come masked to 64 bits)."""
    return _SHORT_VARINTS[value] if value < 16384 else _long_varint(value)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (strings, bytes, messages)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def text(number: int, value: str) -> bytes:
    """A string field, left out when empty (proto3 default)."""
    return field(number, value.encode("utf-8")) if value else b""


def any_value(value: object) -> bytes:
    """An AnyValue message's body: bool, int, double, string or an array of those."""
    if isinstance(value, bool):
        return varint(2 << 3) + (b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return varint(3 << 3) + varint(value & 0xFFFFFFFFFFFFFFFF)
    if isinstance(value, float):
        return varint(4 << 3 | 1) + _DOUBLE(value)
    if isinstance(value, str):
        return field(1, value.encode("utf-8"))
    if isinstance(value, (tuple, list)):
        return field(5, b"".join(field(1, any_value(item)) for item in value))
    return field(1, str(value).encode("utf-8"))


def attributes(number: int, pairs: Mapping[str, object] | None) -> bytes:
    """Repeated KeyValue fields `number` (attributes of a span, event, log record or resource)."""
    if not pairs:
        return b""
    out = []
    for key, value in pairs.items():
        cache_key = (number, key, type(value), value) if isinstance(value, (str, int, float)) else None
        encoded = _PAIRS.get(cache_key) if cache_key is not None else None
        if encoded is None:
            encoded = field(number, field(1, key.encode("utf-8")) + field(2, any_value(value)))
            if cache_key is not None:
                if len(_PAIRS) >= _MAX_PAIRS:
                    _PAIRS.clear()
                _PAIRS[cache_key] = encoded
        out.append(encoded)
    return b"".join(out)
