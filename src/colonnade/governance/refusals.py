"""Why a governance request (a key, an agent, a subscription) was refused, with a registry code.

The services raise these; the REST surface renders them with their HTTP status and the CLI
prints them, so both say the same thing about the same refusal.
"""

from __future__ import annotations

from typing import ClassVar

from colonnade.errors import ColonnadeError

__all__ = [
    "ApprovalState",
    "Forbidden",
    "GovernanceRefusal",
    "InvalidRequest",
    "NotApprover",
    "NotResumer",
    "SelfApproval",
    "UnknownResource",
]


class GovernanceRefusal(ColonnadeError):
    code: ClassVar[str] = "A-AUTH-FORBIDDEN"
    http_status: ClassVar[int] = 403

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Forbidden(GovernanceRefusal):
    """The caller may not do this (scope, persona, tenant or team)."""


class UnknownResource(GovernanceRefusal):
    """No such key, agent or subscription among those the caller may see."""

    code = "I-REQ-UNKNOWN-RESOURCE"
    http_status = 404


class InvalidRequest(GovernanceRefusal):
    """The request names something impossible (an unknown persona or API, a bad key)."""

    code = "I-REQ-GOVERNANCE"
    http_status = 400


class SelfApproval(Forbidden):
    """Four-eyes: the principal that asked for a call cannot approve or deny it."""

    code = "A-AUTH-APPROVAL-SELF"


class NotApprover(Forbidden):
    """The actor's persona is not one that may approve calls of this API."""

    code = "A-AUTH-APPROVER"


class NotResumer(Forbidden):
    """Only an approved call's requester, or the approver who approved it, may resume it."""

    code = "A-AUTH-RESUME-PRINCIPAL"


class ApprovalState(GovernanceRefusal):
    """The approval was decided, used or expired already."""

    code = "P-PRECOND-APPROVAL-STATE"
    http_status = 409
