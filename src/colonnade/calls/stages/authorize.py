"""Authorize: may this principal call this tool? One decision, from the gateway's `Authorizer`.

A tool the caller may not see is answered exactly like an unknown tool (`I-REQ-UNKNOWN-TOOL`),
so a caller cannot probe what other tenants serve; a tool it may see but not call (a write
without the scope, an API without a subscription) gets the decision's `A-AUTH-*` code and its
reasons. The gateway's meta tools are open to every caller that reached the pipeline (what they
show is filtered by the same authorizer); its platform tools are decided like any tool. A decision
that allows a call only after a human's approval puts that obligation on the call for the approval
gate. The decision is noted for the audit stage either way.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.decision_note import note_decision
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.catalog.builtins import open_to_every_caller
from colonnade.governance.authorization import AllowAll, Authorizer, Decision
from colonnade.governance.obligations import Obligations
from colonnade.governance.reach import reach_hint

__all__ = ["Authorize"]

_BUILTIN = Decision.allow("built-in tool")


class Authorize:
    def __init__(self, authorizer: Authorizer | None = None) -> None:
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool
        decision = _BUILTIN if open_to_every_caller(tool) else self.authorizer.decide(call.principal, tool)
        note_decision(tool, decision)
        if decision.allowed and decision.approval:  # allowed once a human approves: the approval gate asks
            owed = Obligations(require_approval=True, reasons=decision.approval)
            return await next(call.evolve(obligations=call.obligations.joined(owed)))
        if decision.allowed:
            return await next(call)
        name = call.request.tool_id
        if not decision.visible or decision.code is None:
            hint = reach_hint(call.principal)  # the caller's constraint, the same for an unknown name
            status, err = error("I-REQ-UNKNOWN-TOOL", f"no tool named '{name}'{hint}", tool_id=name)
            return call.result(status, error=err).model_copy(update={"provenance": None})
        why = "; ".join(decision.reasons) or "not permitted"
        status, err = error(decision.code, f"'{tool.canonical_name}' may not be called: {why}")
        return call.result(status, error=err)
