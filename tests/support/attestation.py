"""Attestations for tests: a compact JWS by an agent's key over one call (docs/policy.md)."""

from __future__ import annotations

import json
import time
from typing import Any

from joserfc import jws
from joserfc.jwk import ECKey

from colonnade.calls.parking import argument_hash

__all__ = ["attest"]


def attest(
    key: ECKey,
    tool: str,
    arguments: dict[str, Any],
    call_id: str,
    *,
    issued_at: float | None = None,
    **overrides: Any,
) -> str:
    payload = {
        "tool": tool,
        "args_hash": argument_hash(arguments),
        "call_id": call_id,
        "iat": int(issued_at if issued_at is not None else time.time()),
        **overrides,
    }
    body = json.dumps(payload, separators=(",", ":")).encode()
    return jws.serialize_compact({"alg": "ES256"}, body, key, algorithms=["ES256"])
