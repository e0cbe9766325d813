"""Execute: hand the call to its adapter within the time left before the deadline."""

from __future__ import annotations

from typing import Any

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.keys import backend_key
from colonnade.calls.pipeline import Next

__all__ = ["IDEMPOTENCY_HEADER", "Execute"]

# Forwarded so a backend can recognise a retry of a call it may already have executed.
IDEMPOTENCY_HEADER = "Idempotency-Key"


class Execute:
    """The last stage: it ends every call it receives."""

    def __init__(self, http: HttpAdapter) -> None:
        self.http = http

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool
        if tool.adapter != "http" or tool.binding is None:
            status, err = error("S-TOOL-CONFIG", f"'{tool.canonical_name}' has no executable HTTP binding")
            return call.result(status, error=err)
        key = backend_key(call)
        headers = {IDEMPOTENCY_HEADER: key} if key is not None else None
        outcome = await self.http.execute(
            tool.binding, call.request.input, timeout_s=call.remaining_s, headers=headers
        )
        if outcome.kind is OutcomeKind.SUCCESS:
            return call.result(CallStatus.SUCCESS, output=outcome.body)
        status, err = error(outcome.error_code or "S-TOOL-INTERNAL", outcome.message, **_details(outcome))
        return call.result(status, error=err)


def _details(outcome: AdapterOutcome) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if outcome.status_code is not None:
        details["upstream_status"] = outcome.status_code
    if outcome.retry_after_ms is not None:
        details["retry_after_ms"] = outcome.retry_after_ms
    return details
