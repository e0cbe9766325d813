"""What the client raises: never for an outcome the gateway typed (those are results), only for
what the agent must handle differently: a result that breaks the tool's own output schema, an
approval that was denied or expired, or a gateway that did not answer with an envelope."""

from __future__ import annotations

from typing import Any

from colonnade.errors import ColonnadeError

__all__ = ["ApprovalNotGranted", "ClientError", "OutputSchemaMismatch"]


class ClientError(ColonnadeError):
    """The gateway's answer could not be used as a call result."""


class OutputSchemaMismatch(ClientError):
    """A success whose output breaks the tool's output schema: do not act on it."""

    def __init__(self, tool: str, violations: list[str], output: Any) -> None:
        self.tool = tool
        self.violations = violations
        self.output = output
        listed = "; ".join(violations[:5])
        super().__init__(f"the output of {tool} breaks its output schema: {listed}")


class ApprovalNotGranted(ClientError):
    """The approval of a parked call was denied, or expired, before it could run."""

    def __init__(self, approval_id: str, state: str, comment: str | None = None) -> None:
        self.approval_id = approval_id
        self.state = state
        self.comment = comment
        why = f" ({comment})" if comment else ""
        super().__init__(f"approval {approval_id} is {state}{why}: the call did not run")
