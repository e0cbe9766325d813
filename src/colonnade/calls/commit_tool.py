"""`colonnade__commit_call`: phase 2 of a two-phase call, as a built-in tool run through the pipeline.

MCP clients call it by that name, REST clients through `POST /v1/calls/commit`; either way it is
one call of this tool, with the span, metrics and log line of any call. Its handler resumes the
prepared call (the coordinator runs the contract's commit operation through the pipeline too).
"""

from __future__ import annotations

from typing import Any

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.builtins import builtin_tool
from colonnade.contracts.model import SideEffects

__all__ = ["COMMIT_TOOL", "COMMIT_TOOL_NAME", "CommitHandler", "outcome_of"]

COMMIT_TOOL_NAME = "colonnade__commit_call"
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commit_token": {
            "type": "string",
            "minLength": 1,
            "description": "The commit_token a two-phase call answered with (status success_prep).",
        }
    },
    "required": ["commit_token"],
    "additionalProperties": False,
}

COMMIT_TOOL = builtin_tool(
    "commit_call",
    wire_name=COMMIT_TOOL_NAME,
    title="Commit a prepared call",
    description=(
        "Finalize a two-phase call that answered success_prep with a commit_token. Use once, "
        "before the token's deadline; an uncommitted call is rolled back.\nInputs: commit_token*"
    ),
    input_schema=_SCHEMA,
    side_effects=SideEffects.WRITE,
)


class CommitHandler:
    """The built-in handler of the commit tool (registered with the `builtin` adapter)."""

    def __init__(self, coordinator: TwoPhaseCoordinator) -> None:
        self.coordinator = coordinator

    async def __call__(self, invocation: Invocation) -> AdapterOutcome:
        token = str(invocation.arguments["commit_token"])
        return outcome_of(await self.coordinator.commit(token, call_id=invocation.call_id))


def outcome_of(result: CallResult) -> AdapterOutcome:
    """A finished call's result as the outcome of the built-in tool that ran it."""
    warnings = tuple(result.warnings)
    if result.ok:
        return AdapterOutcome(OutcomeKind.SUCCESS, body=result.output, warnings=warnings)
    err = result.error
    return AdapterOutcome(
        OutcomeKind.RETRYABLE_ERROR
        if result.status is CallStatus.RETRYABLE_ERROR
        else OutcomeKind.TERMINAL_ERROR,
        error_code=err.code if err is not None else "S-TOOL-INTERNAL",
        message=err.message if err is not None else None,
        details=dict(err.details) if err is not None else None,
        warnings=warnings,
    )
