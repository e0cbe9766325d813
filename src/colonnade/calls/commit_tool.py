"""`colonnade__commit_call` and `colonnade__discard_call`: the end of a two-phase call, as built-in tools.

MCP clients call them by these names, REST clients through `POST /v1/calls/commit` and
`POST /v1/calls/discard`; either way it is one call of the tool, with the span, metrics, log line
and audit record of any call. The handlers hand the caller to the coordinator, which admits only
the principal that prepared the call and runs the contract's commit or compensate operation
through the pipeline too.
"""

from __future__ import annotations

from typing import Any

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.builtins import builtin_tool
from colonnade.contracts.model import SideEffects

__all__ = [
    "COMMIT_TOOL",
    "COMMIT_TOOL_NAME",
    "DISCARD_TOOL",
    "DISCARD_TOOL_NAME",
    "TWO_PHASE_TOOLS",
    "CommitHandler",
    "DiscardHandler",
    "outcome_of",
]

COMMIT_TOOL_NAME = "colonnade__commit_call"
DISCARD_TOOL_NAME = "colonnade__discard_call"
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

DISCARD_TOOL = builtin_tool(
    "discard_call",
    wire_name=DISCARD_TOOL_NAME,
    title="Discard a prepared call",
    description=(
        "Give up a two-phase call that answered success_prep: its compensation (e.g. releasing a hold) "
        "runs now and the commit_token can no longer commit. Only the caller that prepared it may "
        "discard it.\nInputs: commit_token*"
    ),
    input_schema=_SCHEMA,
    side_effects=SideEffects.WRITE,
)

TWO_PHASE_TOOLS = frozenset({COMMIT_TOOL.canonical_name, DISCARD_TOOL.canonical_name})
"""The built-in tools listed while the catalog holds a two-phase tool."""


class CommitHandler:
    """The built-in handler of the commit tool (registered with the `builtin` adapter)."""

    def __init__(self, coordinator: TwoPhaseCoordinator) -> None:
        self.coordinator = coordinator

    async def __call__(self, invocation: Invocation) -> AdapterOutcome:
        token = str(invocation.arguments["commit_token"])
        committed = self.coordinator.commit(token, principal=invocation.principal, call_id=invocation.call_id)
        return outcome_of(await committed)


class DiscardHandler:
    """The built-in handler of the discard tool."""

    def __init__(self, coordinator: TwoPhaseCoordinator) -> None:
        self.coordinator = coordinator

    async def __call__(self, invocation: Invocation) -> AdapterOutcome:
        token = str(invocation.arguments["commit_token"])
        discarded = self.coordinator.discard(
            token, principal=invocation.principal, call_id=invocation.call_id
        )
        return outcome_of(await discarded)


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
