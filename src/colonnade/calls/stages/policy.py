"""Policy: the Rego policies decide whether an authorized call may go on, and on what terms.

It runs right after authorize. A denial ends the call with `A-AUTH-POLICY-DENIED` and the
policies' reasons; when no policy set can decide (none loaded, or evaluation failed) the call
is refused with `A-AUTH-POLICY-UNAVAILABLE` (fail-closed; the gate logs why). An allowed call
goes on carrying the decision's obligations (approval, attestation, output redaction) for the
stages after it. Built-in tools are left to authorization, like there.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import note_decision, note_policy
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.governance.authorization import Decision
from colonnade.governance.policy.gate import PolicyGate, PolicyUnavailable
from colonnade.observability.tracing import io_span

__all__ = ["PolicyCheck"]


class PolicyCheck:
    def __init__(self, gate: PolicyGate) -> None:
        self.gate = gate

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool
        if tool.builtin:
            return await next(call)
        try:
            with io_span("colonnade.policy decide") as span:
                decision = self.gate.decide(call.principal, tool, call.request.input, call.policy_context)
                if span is not None:
                    span.set_attribute("colonnade.policy.allowed", decision.allowed)
        except PolicyUnavailable as exc:
            note_policy({"allowed": False, "unavailable": str(exc)})
            status, err = error(
                "A-AUTH-POLICY-UNAVAILABLE",
                f"no policy could decide on '{tool.canonical_name}', so it was not run: {exc}",
            )
            return call.result(status, error=err)
        note_policy(decision.to_audit())
        if not decision.allowed:
            note_decision(tool, Decision.refuse("A-AUTH-POLICY-DENIED", *decision.deny))
            status, err = error(
                "A-AUTH-POLICY-DENIED",
                f"'{tool.canonical_name}' may not be called: {'; '.join(decision.deny)}",
                reasons=list(decision.deny),
                policy_version=decision.version,
            )
            return call.result(status, error=err)
        return await next(call.evolve(obligations=call.obligations.joined(decision.obligations())))
