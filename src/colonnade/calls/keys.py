"""Idempotency keys are scoped to tenant + tool + principal; backends get an opaque scoped form.

The principal is who the gateway decided is calling (never a caller-asserted body field), so
two callers using the same key never see each other's outcomes.
"""

from __future__ import annotations

import hashlib

from colonnade.calls.call import Call

__all__ = ["backend_key", "scope_of"]


def scope_of(call: Call) -> str:
    return f"{call.tool.tenant}|{call.tool.canonical_name}|{call.principal.key}"


def backend_key(call: Call) -> str | None:
    """What the backend sees as `Idempotency-Key`: the same for retries, different across scopes."""
    key = call.request.constraints.idempotency_key
    if key is None:
        return None
    digest = hashlib.sha256(f"{scope_of(call)}\0{key}".encode()).hexdigest()
    return f"cln-{digest[:40]}"
