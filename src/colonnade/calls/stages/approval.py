"""Approval gate: a call that needs a human's approval runs only with a valid approval token.

Without a token a call with valid arguments is parked and answered `pending` with its approval
id (nothing runs); with one, the token must be this gateway's, unexpired, unused, and bound to
exactly this call (tool, version, arguments, tenant, requester, policy version); it is spent
before the call goes on. A gateway without a database cannot park calls: it refuses them
(fail-closed), as it refuses dry runs of such tools (a dry run never asks anyone for anything).
An approved call whose tool asks its caller a question (a proxied tool's input round) continues
when the caller answers, without spending the approval again (`calls/approvals/rounds.py`): the
call's channel says which round a request answers, and the round parked for a new question is
handed to the surface on the result (`Handover.continuation`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from colonnade.adapters.outcome import INPUT_REQUIRED
from colonnade.calls.approvals import ApprovalCoordinator, needs_approval
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.caller_channel import CallerChannel
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
        approvals = self.approvals
        token = call.request.approval_token
        channel = call.channel
        answering = channel.continues if channel is not None else None
        until: datetime | None
        if answering is not None:  # the caller answers the question its approved call was asked
            taken = await approvals.rounds.take(call, answering, approvals.facts(call), token)
            if isinstance(taken, CallResult):
                return taken
            approval, until = taken[0], taken[1]
        elif token is None:
            # No approver is asked about a call its tool would refuse anyway.
            return schema_refusal(call) or await approvals.park(call)
        else:
            redeemed = await approvals.redeem(call, token)
            if isinstance(redeemed, CallResult):
                return redeemed
            approval, until = redeemed, redeemed.token_expires_at
        result = await next(call)
        if channel is not None and _asks_its_caller(result, channel):
            continuation = await approvals.rounds.hold(call, approval.id, until)
            return result.handing_over(replace(result.handover, continuation=continuation))
        return result


def _asks_its_caller(result: CallResult, channel: CallerChannel) -> bool:
    """The tool asked a question that goes back to the caller as an input round to answer."""
    code = result.error.code if result.error is not None else None
    return code == INPUT_REQUIRED and channel.passes_input_rounds


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
