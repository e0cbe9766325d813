"""Timestamps read back from either database as aware UTC datetimes.

PostgreSQL returns aware values; SQLite returns naive ones through SQLAlchemy, and text through
the direct connection (`SqliteDirect`). Every store record holds aware UTC, whatever the source.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

from colonnade.store.sqlite_direct import parse_date

__all__ = ["aware"]


@overload
def aware(value: datetime | str) -> datetime: ...


@overload
def aware(value: None) -> None: ...


def aware(value: datetime | str | None) -> datetime | None:
    if value is None:
        return None
    moment = parse_date(value) if isinstance(value, str) else value
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
