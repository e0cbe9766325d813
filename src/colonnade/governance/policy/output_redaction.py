"""Hide the output fields a policy names (`redact_output_fields`), by dotted path.

`customer.email` replaces the value at that path with `[redacted]`; a list on the way applies
the rest of the path to each of its items (`invoices.customer.email`), and `*` matches every key
of an object. A path that leads nowhere changes nothing. The value keeps its place (so clients
relying on the field's presence still find it) but becomes a string whatever its type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from colonnade.observability.redaction import REDACTED

__all__ = ["REDACTED", "redact_paths"]


def redact_paths(value: Any, paths: Iterable[str]) -> Any:
    """A copy of `value` with every path redacted; `value` itself is left as it was."""
    for path in paths:
        value = _redact(value, [part for part in path.split(".") if part])
    return value


def _redact(value: Any, parts: list[str]) -> Any:
    if not parts:
        return REDACTED
    if isinstance(value, list):
        return [_redact(item, parts) for item in value]
    if not isinstance(value, dict):
        return value
    head, rest = parts[0], parts[1:]
    keys = list(value) if head == "*" else [head] if head in value else []
    if not keys:
        return value
    copy = dict(value)
    for key in keys:
        copy[key] = _redact(value[key], rest)
    return copy
