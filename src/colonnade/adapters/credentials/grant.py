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

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def refused(exc: CredentialRefused) -> AdapterOutcome:
    """The outcome of a call refused its upstream credential: nothing was sent."""
    kind = OutcomeKind.RETRYABLE_ERROR if exc.code.startswith("R-") else OutcomeKind.TERMINAL_ERROR
    return AdapterOutcome(kind, error_code=exc.code, message=exc.message)
