"""Calls awaiting a human's approval: parked by the approval gate, run once approved.

The gate parks a call that needs approval (reason `awaiting_approval`); the parked call's token is
the approval's id. Approvers decide on the approval desk (`desk.py`). An approved
call runs either when the caller retries it with the approval's signed token, or when its parked
call is resumed (by its requester, in its tenant, or by the approver who approved it, with `run`;
anyone else is refused with `A-AUTH-RESUME-PRINCIPAL`, audited, and the call stays approved for
them; the parked-call path itself checks this too, whoever calls it): resuming runs the original
request through the whole pipeline, as the requester, carrying the token, so the gate checks and
spends the token on that road too. Before a resumed call runs, its requester's credential is read
again (`Standing`): a key or agent revoked or expired since it asked is refused and audited, and
the call then runs as the requester stands now, so authorization judges it afresh. Expiry ends
the approval.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from colonnade.calls.approvals.desk import (
    ApprovalDesk,
    CallFacts,
    TokenRefused,
    principal_from,
    resumer_refusal,
)
from colonnade.calls.approvals.rounds import ApprovalRounds
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus, Pending
from colonnade.calls.parking import ParkedCalls, ParkReason, argument_hash
from colonnade.contracts.model import SideEffects
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.identity.standing import Standing
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import ApprovalState, NotResumer, UnknownResource
from colonnade.store.approvals_repo import ApprovalRecord
from colonnade.store.parked_calls_repo import ParkedRecord

__all__ = ["ApprovalCoordinator", "approval_reasons", "needs_approval", "next_action"]

Runner = Callable[[CallRequest, Principal], Awaitable[CallResult]]


def approval_reasons(call: Call) -> tuple[str, ...]:
    """Why the call needs a human's approval; empty when it does not."""
    tool = call.tool
    reasons: list[str] = []
    if tool.side_effects is SideEffects.DESTRUCTIVE:
        reasons.append(f"{tool.canonical_name} is destructive")
    if tool.source == "mcp":  # a server tool is gated for being destructive, or by its settings
        if tool.requires_human_approval and tool.side_effects is not SideEffects.DESTRUCTIVE:
            where = f"tools.{tool.operation} of server {tool.api!r} in servers:"
            reasons.append(f"{tool.canonical_name} requires a human's approval ({where})")
    elif tool.requires_human_approval or (tool.llm is not None and tool.llm.requires_human_approval):
        reasons.append(f"{tool.canonical_name} requires a human's approval (contract)")
    if call.obligations.require_approval:
        reasons.extend(call.obligations.reasons or ("a policy requires approval",))
    return tuple(reasons)


def needs_approval(call: Call) -> bool:
    """Destructive tools, tools whose record asks for it, and calls a policy obliges to wait."""
    return bool(approval_reasons(call))


def next_action(approval_id: str) -> str:
    return (
        f"an approver must approve it (colonnade approvals approve {approval_id} --as <approver>, or POST "
        f"/v1/approvals/{approval_id}/approve); then call again with the approval's token (GET "
        f"/v1/approvals/{approval_id} shows it to you: REST field approval_token or header "
        f'Colonnade-Approval-Token, MCP _meta["colonnade/approval_token"]), or resume it with POST '
        f"/v1/approvals/{approval_id}/resume"
    )


class ApprovalCoordinator:
    """The `awaiting_approval` reason's handler of parked calls, and the gate's helper."""

    def __init__(
        self,
        desk: ApprovalDesk,
        parked: ParkedCalls,
        *,
        request_ttl_s: float,
        standing: Standing | None = None,
    ) -> None:
        self.desk = desk
        self.parked = parked
        self.request_ttl_s = request_ttl_s
        self.standing = standing
        self._run: Runner | None = None
        parked.register(ParkReason.AWAITING_APPROVAL, self)
        self.rounds = ApprovalRounds(desk, parked)

    def bind(self, run: Runner) -> None:
        """The call entry point an approved call resumes through (`CallService.call`)."""
        self._run = run

    def facts(self, call: Call) -> CallFacts:
        tool = call.tool
        return CallFacts(
            tool=tool.canonical_name,
            version=tool.version,
            # A gateway tool belongs to no tenant: its call is approved in the caller's.
            tenant=(call.principal.tenant or tool.tenant) if tool.builtin else tool.tenant,
            input=dict(call.request.input),
            input_hash=argument_hash(call.request.input),
            requester=call.principal,
            reasons=approval_reasons(call),
            policy_version=call.obligations.policy_version,
            call_id=call.request.call_id,
            trace_id=call.request.context.trace_id,
        )

    async def park(self, call: Call) -> CallResult:
        """Suspend the call until an approver decides; answer `pending` with what to do next."""
        record = await self.parked.park(
            call, ParkReason.AWAITING_APPROVAL, payload=None, window_ms=self.request_ttl_s * 1000
        )
        await self.desk.ask(record.token, self.facts(call), record.deadline)
        pending = Pending(
            reason="awaiting_approval",
            token=record.token,
            expires_at=record.deadline,
            next_action=next_action(record.token),
        )
        result = call.result(CallStatus.PENDING)
        return result.model_copy(update={"pending": pending})

    async def redeem(self, call: Call, token: str) -> ApprovalRecord | CallResult:
        """The approval, when the token is good for this call (and now spent), else the refusal."""
        try:
            return await self.desk.redeem(token, self.facts(call))
        except TokenRefused as refused:
            status, err = error(refused.code, refused.message, approval_id=refused.approval_id)
            return call.result(status, error=err)

    async def resume_as(
        self, actor: Principal, approval_id: str, *, call_id: str | None = None
    ) -> CallResult:
        """Run an approved call now, for its requester or the approver that approved it."""
        try:
            record = await self.desk.show(actor, approval_id)
        except UnknownResource:
            await self.desk.refuse_unseen_run(actor, approval_id)
            raise
        refused = resumer_refusal(actor, record)
        if refused is not None:
            await self.desk.refuse_run(actor, record, NotResumer.code, refused)
            raise NotResumer(refused)
        if record.state != "approved":
            raise ApprovalState(f"approval {approval_id} is {record.state}; only an approved call runs")
        return await self.parked.resume(
            approval_id, ParkReason.AWAITING_APPROVAL, call_id=call_id, principal=actor
        )

    # -- the ParkingHandler of calls awaiting approval -------------------------------------------

    async def admit(
        self, parked: ParkedRecord, principal: Principal, call_id: str | None, doing: str
    ) -> CallResult | None:
        record = await self.desk.store.get(parked.token)
        if record is None:
            return None  # `resume` answers an approval that is gone
        refused = resumer_refusal(principal, record)
        if refused is None:
            return None
        await self.desk.refuse_run(principal, record, NotResumer.code, refused)
        status, err = error(NotResumer.code, refused, approval_id=record.id, parked_call_id=parked.call_id)
        return CallResult(call_id=call_id or record.id, status=status, error=err)

    async def resume(self, parked: ParkedRecord, *, call_id: str | None, principal: Principal) -> CallResult:
        record = await self.desk.store.get(parked.token)
        if record is None or record.token is None or self._run is None:
            return self.refused(parked, parked.token, record.state if record else "unknown", call_id)
        requester = principal_from(record.requester_principal)
        if self.standing is not None:
            standing = await self.standing.recheck(requester)
            if isinstance(standing, AuthFailure):
                await self.desk.refuse_run(principal, record, standing.code, standing.message)
                status, err = error(standing.code, standing.message, approval_id=record.id)
                return CallResult(call_id=call_id or record.id, status=status, error=err)
            requester = standing
        return await self._run(_request_of(record, call_id), requester)

    def refused(self, parked: ParkedRecord | None, token: str, why: str, call_id: str | None) -> CallResult:
        status, err = error(
            "P-PRECOND-APPROVAL-STATE",
            f"the call awaiting approval {token} is {why}; it cannot run",
            approval_id=token,
            state=why,
        )
        return CallResult(call_id=call_id or token, status=status, error=err)

    async def expire(self, parked: ParkedRecord) -> bool:
        await self.desk.expire(parked.token)
        return True


def _request_of(record: ApprovalRecord, call_id: str | None) -> CallRequest:
    request = CallRequest(
        tool_id=record.tool, tool_version=record.version, input=record.input, approval_token=record.token
    )
    return request.model_copy(update={"call_id": call_id}) if call_id is not None else request
