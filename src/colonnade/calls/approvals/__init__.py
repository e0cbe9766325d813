"""Human approval of calls, in one room: the gate's coordinator, the desk and the signed tokens.

`coordinator` parks a call that needs approval and runs it once approved (the approval stage in
`calls/stages/approval.py` is its gate); `rounds` lets an approved call answer its tool's question
without spending the approval again; `desk` is where approvers ask, decide and redeem, audited;
`signing` issues and checks the approval tokens. The room sits in `calls/` because the coordinator
parks and resumes `Call`s; the desk's rules are governance's (stewards, refusals, audit).
`ApprovalRecord` is what the desk answers with: surfaces name it from here, not from the store.
"""

from colonnade.calls.approvals.coordinator import (
    ApprovalCoordinator,
    approval_reasons,
    needs_approval,
    next_action,
)
from colonnade.calls.approvals.desk import (
    ApprovalDesk,
    CallFacts,
    TokenRefused,
    approval_view,
    is_requester,
    principal_from,
    resumer_refusal,
    snapshot_of,
)
from colonnade.calls.approvals.rounds import ApprovalRounds
from colonnade.calls.approvals.signing import ApprovalClaims, ApprovalSigner, BadToken
from colonnade.store.approvals_repo import ApprovalRecord

__all__ = [
    "ApprovalClaims",
    "ApprovalCoordinator",
    "ApprovalDesk",
    "ApprovalRecord",
    "ApprovalRounds",
    "ApprovalSigner",
    "BadToken",
    "CallFacts",
    "TokenRefused",
    "approval_reasons",
    "approval_view",
    "is_requester",
    "needs_approval",
    "next_action",
    "principal_from",
    "resumer_refusal",
    "snapshot_of",
]
