"""What an upstream credential mode yields for one call, and how it refuses one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind

__all__ = ["CredentialRefused", "UpstreamGrant", "refused"]


@dataclass(frozen=True, slots=True)
class UpstreamGrant:
    """The bearer token one call sends upstream, with what the audit record may say of it.

    `subject` is whom the upstream sees acting (the caller's `sub` for forward and exchange);
    the token itself never reaches a repr, a log line or the audit record.
    """

    mode: str
    subject: str
    token: str = field(repr=False)

    def header(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}"}

    def audit(self) -> dict[str, Any]:
        return {"mode": self.mode, "subject": self.subject}


class CredentialRefused(Exception):
    """The call cannot get an upstream credential; nothing was sent upstream. `code` is registered."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        credential: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        """Facts for the caller (e.g. `connect_url`, the page where a user connects an account)."""
        self.credential = credential
        """What the audit record may say of the credential that was missing (mode, provider)."""


def refused(exc: CredentialRefused) -> AdapterOutcome:
    """The outcome of a call refused its upstream credential: nothing was sent."""
    kind = OutcomeKind.RETRYABLE_ERROR if exc.code.startswith("R-") else OutcomeKind.TERMINAL_ERROR
    return AdapterOutcome(
        kind, error_code=exc.code, message=exc.message, details=exc.details, credential=exc.credential
    )
