"""`colonnade__record_skip`: an agent records a step it skipped on purpose, and why, in the audit chain.

The tool-call contract asks agents for "no silent skips": a plan step that was not run (a
precondition did not hold, the user said no, a cheaper path was taken) is recorded like a call, so
whoever reads the audit sees the gap and its reason next to the calls that did run. The record is
a `step.skip` audit event of the caller, in its tenant, naming the skipped tool and the call or
trace it belongs to; it runs through the whole pipeline like every builtin (authentication, audit
of the call itself, idempotency when keyed).
"""

from __future__ import annotations

from typing import Any, Protocol

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.catalog.builtins import builtin_tool
from colonnade.contracts.model import SideEffects
from colonnade.governance.audit import AuditEvent, EventKind

__all__ = ["SKIP_TOOL", "SKIP_TOOL_NAME", "SkipHandler"]

SKIP_TOOL_NAME = "colonnade__record_skip"
_TEXT = {"type": "string", "minLength": 1, "maxLength": 512}
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_id": {**_TEXT, "description": "The tool whose call was skipped (canonical or wire name)."},
        "reason": {**_TEXT, "description": "Why it was skipped, in plain words (no secrets)."},
        "call_id": {**_TEXT, "description": "The call id the step would have had, if the plan named one."},
        "trace_id": {**_TEXT, "description": "The trace the skipped step belongs to."},
    },
    "required": ["tool_id", "reason"],
    "additionalProperties": False,
}
_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"recorded": {"type": "boolean"}, "tool_id": {"type": "string"}},
    "required": ["recorded", "tool_id"],
}

SKIP_TOOL = builtin_tool(
    "record_skip",
    wire_name=SKIP_TOOL_NAME,
    title="Record a skipped step",
    description=(
        "Record in the audit log that you skipped a step of your plan on purpose, and why (no silent "
        "skips).\nInputs: tool_id*, reason*, call_id, trace_id"
    ),
    input_schema=_SCHEMA,
    output_schema=_OUTPUT,
    side_effects=SideEffects.WRITE,
)


class AuditAppender(Protocol):
    async def append(self, event: AuditEvent) -> None: ...


class SkipHandler:
    """The built-in handler: one `step.skip` record per call, durable before the answer."""

    def __init__(self, audit: AuditAppender) -> None:
        self.audit = audit

    async def __call__(self, invocation: Invocation) -> AdapterOutcome:
        arguments = invocation.arguments
        skipped = str(arguments["tool_id"])
        event = AuditEvent.by(
            invocation.principal,
            EventKind.STEP_SKIP,
            tool=skipped,
            call_id=str(arguments.get("call_id") or invocation.call_id),
            trace_id=str(arguments.get("trace_id") or invocation.trace_id),
            outcome="skipped",
            details={"reason": str(arguments["reason"])},
        )
        await self.audit.append(event)
        return AdapterOutcome(OutcomeKind.SUCCESS, body={"recorded": True, "tool_id": skipped})
