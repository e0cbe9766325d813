"""Execute: hand the call to the adapter of its tool's binding kind, within the time left.

The time left is the call's, less what its records need (`execution_time_left`). A call left less
time for its backend than the gateway keeps for its own records (the stages before it spent the
rest, e.g. waiting for the database) is not sent: a request sent with no time to answer could only
end "effect unknown", so it ends `R-CAP-OVERLOAD` (`reason: deadline`, nothing ran) instead.
Handing the call over is noted (`note_dispatch`): from here on an effect may have happened, which
the audit and drain stages must say when they cannot answer the result itself.
"""

from __future__ import annotations

from typing import Any

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import AdapterRegistry, Invocation
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import Dispatch, note_dispatch, note_upstream_credential
from colonnade.calls.envelope import CallResult, CallStatus, hand_over
from colonnade.calls.handover import Handover
from colonnade.calls.keys import backend_key
from colonnade.calls.load import DEADLINE
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.deadline import execution_time_left, record_reserve_s
from colonnade.calls.stages.retry import may_retry

__all__ = ["Execute", "dispatch_of", "result_of"]


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
        time_left = execution_time_left(call)
        if time_left < record_reserve_s(call):
            return _too_late(call, time_left)
        invocation = Invocation(
            tool=tool,
            arguments=call.request.input,
            timeout_s=time_left,
            principal=call.principal,
            call_id=call.request.call_id,
            trace_id=call.request.context.trace_id,
            idempotency_key=backend_key(call),
            channel=call.channel,
        )
        note_dispatch(dispatch_of(call))
        outcome = await adapter.execute(invocation)
        if outcome.credential is not None:
            note_upstream_credential(outcome.credential)
        return result_of(call, outcome)


def dispatch_of(call: Call) -> Dispatch:
    """What handing this call to its backend means for a resend: keyed, and safe to run again."""
    keyed = call.request.constraints.idempotency_key is not None
    return Dispatch(keyed=keyed, repeatable=call.tool.builtin or may_retry(call))


def _too_late(call: Call, time_left: float) -> CallResult:
    status, err = error(
        "R-CAP-OVERLOAD",
        f"only {time_left * 1000:.0f} ms of the call's time were left for its backend, too little to "
        "answer in; it was not sent",
        reason=DEADLINE,
        remaining_ms=round(call.remaining_s * 1000, 1),
        retry_after_ms=round(max(50.0, record_reserve_s(call) * 1000)),
    )
    return call.result(status, error=err)


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
