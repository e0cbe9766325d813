"""An approved call whose tool asks its caller a question: the answer continues the same approved call.

A proxied MCP tool may answer a 2026-07-28 call with an input round (`input_required`); the client
answers by calling again with its responses. For a call that ran on an approval, that second call is
not a second use of the approval: it continues the one call the approver allowed. So when an
approved call ends on a question the caller will be handed, the approval gate parks an
`awaiting_input` round (bound to the tool, the arguments' hash and the requester in its tenant,
single use, ending when the approval's token does) and the surface hands its token out inside the
round's `requestState`. The caller's answer carries it back: the round is taken once (a replayed answer is
refused and audited), and the call runs again without spending the approval anew. If the tool asks
again, a fresh round is parked. A round cannot be resumed any other way; it expires by the sweep.
"""

from __future__ import annotations

from datetime import UTC, datetime

from colonnade.calls.approvals.desk import ApprovalDesk, CallFacts, TokenRefused
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.parking import ParkedCalls, ParkReason
from colonnade.governance.principal import Principal
from colonnade.store.approvals_repo import ApprovalRecord
from colonnade.store.parked_calls_repo import ParkedRecord

__all__ = ["ApprovalRounds"]


class ApprovalRounds:
    """The `awaiting_input` reason's handler of parked calls: answer rounds of approved calls."""

    def __init__(self, desk: ApprovalDesk, parked: ParkedCalls) -> None:
        self.desk = desk
        self.parked = parked
        parked.register(ParkReason.AWAITING_INPUT, self)

    async def hold(self, call: Call, approval_id: str, until: datetime | None) -> str | None:
        """Park the round the caller's answer will take; None once the approval's time is over."""
        if until is None:
            return None
        left_ms = (until - datetime.now(UTC)).total_seconds() * 1000
        if left_ms <= 0:
            return None
        record = await self.parked.park(
            call, ParkReason.AWAITING_INPUT, payload={"approval_id": approval_id}, window_ms=left_ms
        )
        return record.token

    async def take(
        self, call: Call, round_token: str, facts: CallFacts, approval_token: str | None
    ) -> tuple[ApprovalRecord, datetime] | CallResult:
        """The approval this answer continues and when its round ended, or the refusal (audited)."""
        record = await self.parked.store.get(round_token)
        try:
            if record is None or record.reason != ParkReason.AWAITING_INPUT.value:
                raise await self.desk.refuse_round(
                    facts, None, "A-AUTH-APPROVAL-TOKEN", "the answer's request state names no question asked"
                )
            approval_id = str((record.payload or {}).get("approval_id"))
            asker = record.principal == call.principal.key and record.tenant == call.principal.tenant
            if not asker or record.tool != call.tool.canonical_name:
                message = "the question was asked of another caller or for another tool"
                raise await self.desk.refuse_round(facts, approval_id, "A-AUTH-APPROVAL-TOKEN", message)
            if record.input_hash != facts.input_hash:
                message = "the answer names other arguments than the approved call that asked"
                raise await self.desk.refuse_round(facts, approval_id, "A-AUTH-APPROVAL-ARGUMENTS", message)
            approval = await self.desk.round_approval(approval_id, approval_token, facts)
            if not await self.parked.store.transition(round_token, "parked", "resumed", live_only=True):
                current = await self.parked.store.get(round_token) or record
                expired = current.state in ("parked", "expiring", "expired")
                code = "A-AUTH-APPROVAL-EXPIRED" if expired else "A-AUTH-APPROVAL-REPLAY"
                message = (
                    f"the question of approval {approval_id}'s call is no longer open (its approval expired)"
                    if expired
                    else f"the question of approval {approval_id}'s call was answered already"
                )
                raise await self.desk.refuse_round(facts, approval_id, code, message)
            await self.desk.round_used(approval, facts)
        except TokenRefused as refused:
            status, err = error(refused.code, refused.message, approval_id=refused.approval_id)
            return call.result(status, error=err)
        return approval, record.deadline

    # -- the ParkingHandler of rounds: never resumed except by the caller's answer -------------------

    async def admit(
        self, parked: ParkedRecord, principal: Principal, call_id: str | None, doing: str
    ) -> CallResult | None:
        return None  # `resume` refuses every resume: only the asker's answer (`take`) continues a round

    async def resume(self, parked: ParkedRecord, *, call_id: str | None, principal: Principal) -> CallResult:
        return self.refused(parked, parked.token, "a question to answer", call_id)

    def refused(self, parked: ParkedRecord | None, token: str, why: str, call_id: str | None) -> CallResult:
        status, err = error(
            "P-PRECOND-APPROVAL-STATE",
            f"the round {token} is {why}: answer it by calling the tool again with the question's "
            "inputResponses and requestState",
            approval_id=token,
            state=why,
        )
        return CallResult(call_id=call_id or token, status=status, error=err)

    async def expire(self, parked: ParkedRecord) -> bool:
        return True
