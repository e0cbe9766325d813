"""Human approval of calls: the desk (ask, decide, redeem) and the signed tokens it issues."""

from colonnade.governance.approvals.desk import (
    ApprovalDesk,
    CallFacts,
    TokenRefused,
    approval_view,
    is_requester,
    principal_from,
    resumer_refusal,
    snapshot_of,
)
from colonnade.governance.approvals.signing import ApprovalClaims, ApprovalSigner, BadToken

__all__ = [
    "ApprovalClaims",
    "ApprovalDesk",
    "ApprovalSigner",
    "BadToken",
    "CallFacts",
    "TokenRefused",
    "approval_view",
    "is_requester",
    "principal_from",
    "resumer_refusal",
    "snapshot_of",
]
