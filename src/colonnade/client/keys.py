"""Idempotency keys as the tool-call contract derives them: a hash of what makes two calls the same.

The same tool, function, canonical input and version range give the same key, so a resend of a
call (after a timeout, a crash, a retryable answer) is recognised by the gateway and answered from
its stored outcome instead of running twice; any difference gives another key. Canonical input is
JSON with sorted keys and no insignificant whitespace, so the order an agent built a dict in does
not matter.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

__all__ = ["idempotency_key"]

_PREFIX = "ik_"


def idempotency_key(
    tool_id: str, input: dict[str, Any], *, fn: str | None = None, version: str | None = None
) -> str:
    """`ik_` and 64 hex characters (SHA-256 of the call's identity)."""
    identity = {"tool_id": tool_id, "fn": fn, "input": input, "version": version}
    canonical = orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)
    return _PREFIX + hashlib.sha256(canonical).hexdigest()
