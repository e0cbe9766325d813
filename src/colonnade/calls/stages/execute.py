"""Execute: hand the call to the adapter of its tool's binding kind, within the time left."""

from __future__ import annotations

from typing import Any

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import AdapterRegistry, Invocation
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus, hand_over
from colonnade.calls.handover import Handover
from colonnade.calls.keys import backend_key
from colonnade.calls.pipeline import Next

__all__ = ["Execute", "result_of"]


class Execute:
    """The last stage: it ends every call it receives."""

    def __init__(self, adapters: AdapterRegistry) -> None:
        self.adapters = adapters

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool
        adapter = self.adapters.for_kind(tool.adapter)
        if adapter is None or tool.binding is None:
            status, err = error(
                "S-TOOL-CONFIG",
                f"'{tool.canonical_name}' has no executable binding in this gateway"
                f" (its kind is {tool.adapter!r}; this gateway runs {', '.join(self.adapters.kinds)})",
            )
            return call.result(status, error=err)
        invocation = Invocation(
            tool=tool,
            arguments=call.request.input,
            timeout_s=call.remaining_s,
            principal=call.principal,
            call_id=call.request.call_id,
            trace_id=call.request.context.trace_id,
            idempotency_key=backend_key(call),
            channel=call.channel,
        )
        return result_of(call, await adapter.execute(invocation))


def result_of(call: Call, outcome: AdapterOutcome) -> CallResult:
    """The call's result from what its adapter reported; the code's registry entry sets the status."""
    warnings = list(outcome.warnings)
    if outcome.kind is OutcomeKind.SUCCESS:
        body, cpu_ms = outcome.body, outcome.cpu_ms
        result = call.result(CallStatus.SUCCESS, output=body, warnings=warnings, cpu_ms=cpu_ms)
    else:
        status, err = error(outcome.error_code or "S-TOOL-INTERNAL", outcome.message, **_details(outcome))
        result = call.result(status, error=err, warnings=warnings, cpu_ms=outcome.cpu_ms)
    if outcome.answer is not None:  # the backend's own answer, for a surface that passes it on
        hand_over(result, Handover(tool=call.resolved_tool, answer=outcome.answer))
    return result


def _details(outcome: AdapterOutcome) -> dict[str, Any]:
    details: dict[str, Any] = dict(outcome.details or {})
    if outcome.status_code is not None:
        details["upstream_status"] = outcome.status_code
    if outcome.retry_after_ms is not None:
        details["retry_after_ms"] = outcome.retry_after_ms
    return details
