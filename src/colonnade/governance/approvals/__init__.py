"""Human approval of calls: the desk (ask, decide, redeem) and the signed tokens it issues."""

from colonnade.governance.approvals.desk import (
    ApprovalDesk,
    ApprovalRecord,
    CallFacts,
    TokenRefused,
    approval_view,
    principal_from,
    snapshot_of,
)
from colonnade.governance.approvals.signing import ApprovalClaims, ApprovalSigner, BadToken

__all__ = [
    "ApprovalClaims",
    "ApprovalDesk",
    "ApprovalRecord",
    "ApprovalSigner",
    "BadToken",
    "CallFacts",
    "TokenRefused",
    "approval_view",
    "principal_from",
    "snapshot_of",
]
