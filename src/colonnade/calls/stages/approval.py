"""Approval gate: a call that needs a human's approval runs only with a valid approval token.

Without a token a call with valid arguments is parked and answered `pending` with its approval
id (nothing runs); with one, the token must be this gateway's, unexpired, unused, and bound to
exactly this call (tool, version, arguments, tenant, requester, policy version); it is spent
before the call goes on. A gateway without a database cannot park calls: it refuses them
(fail-closed), as it refuses dry runs of such tools (a dry run never asks anyone for anything).
"""

from __future__ import annotations

from colonnade.calls.approvals import ApprovalCoordinator, needs_approval
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.validate_input import schema_refusal

__all__ = ["ApprovalGate", "needs_approval"]


class ApprovalGate:
    def __init__(self, approvals: ApprovalCoordinator | None = None) -> None:
        self.approvals = approvals

    async def __call__(self, call: Call, next: Next) -> CallResult:
        if not needs_approval(call):
            return await next(call)
        if self.approvals is None or call.request.dry_run:
            return _refused(call)
        token = call.request.approval_token
        if token is None:
            # No approver is asked about a call its tool would refuse anyway.
            return schema_refusal(call) or await self.approvals.park(call)
        refusal = await self.approvals.redeem(call, token)
        return refusal if refusal is not None else await next(call)


def _refused(call: Call) -> CallResult:
    why = (
        "a dry run does not ask for one (call without dry_run to ask an approver)"
        if call.request.dry_run
        else "this gateway has no database to park the call for an approver, so it was not executed"
    )
    status, err = error(
        "P-PRECOND-APPROVAL-REQUIRED",
        f"'{call.tool.canonical_name}' is {call.tool.side_effects.value} and needs a human's approval: {why}",
        tool=call.tool.canonical_name,
    )
    return call.result(status, error=err)
