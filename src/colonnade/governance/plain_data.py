"""Governance records as plain JSON data: the one conversion every listing of them shares."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict
from datetime import datetime
from typing import Any

__all__ = ["plain_fields"]


def plain_fields(record: Any, omit: Collection[str] = ()) -> dict[str, Any]:
    """A dataclass record's fields, datetimes as ISO 8601 and tuples as lists, without `omit`."""
    return {name: _plain(value) for name, value in asdict(record).items() if name not in omit}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value
