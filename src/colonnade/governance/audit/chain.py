"""The hash chain: how a batch of rows is numbered, linked to the record before, and sealed.

Each record's hash is SHA-256 over its previous record's hash and its own fields in a canonical
JSON form (the stored columns in their fixed order, nested keys sorted, UTC timestamps to the
microsecond), so changing any field of any record,
removing one, or inserting one breaks a link that `verify` finds. Numbers run 1, 2, 3... with no
gap. A record cut from the end is the one change a chain cannot show by itself; `colonnade audit
verify` prints the head (number and hash) so it can be compared with a copy kept elsewhere.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from colonnade.store.audit_repo import AUDIT_COLUMNS

__all__ = ["GENESIS", "record_hash", "seal"]

_SEALED = tuple(column for column in AUDIT_COLUMNS if column != "hash")

GENESIS = "0" * 64
"""The `prev_hash` of the first record."""


def record_hash(fields: Mapping[str, Any]) -> str:
    """The seal of one record: every field but `hash` itself, canonically encoded."""
    text = _ENCODE([fields[column] for column in _SEALED])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(tail_seq: int, tail_hash: str | None, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Number `rows` after the tail, link each to the one before and seal it."""
    sealed: list[dict[str, Any]] = []
    previous = tail_hash or GENESIS
    for offset, row in enumerate(rows, start=1):
        linked = {**row, "seq": tail_seq + offset, "prev_hash": previous}
        linked["hash"] = previous = record_hash(linked)
        sealed.append(linked)
    return sealed


def _plain(value: Any) -> Any:
    """The encoder's hook for what JSON has no form of: a moment (the record's `at`) as UTC text."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        # `strftime("%Y-%m-%dT%H:%M:%S.%fZ")`, at half its cost (every record is sealed)
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
    raise TypeError(f"an audit record cannot hold a {type(value).__name__}")


# Moments are encoded by the hook, the only values it is called for: no check per field of a record.
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain).encode
