"""Approval gate: fail-closed until the approval workflow exists.

A tool that requires a human's approval, or is destructive, is never executed by this
gateway without one; this stage is where the approval workflow will plug in.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.contracts.model import SideEffects

__all__ = ["ApprovalGate", "needs_approval"]


def needs_approval(call: Call) -> bool:
    """Destructive tools, tools whose record asks for it (contract llm block, overrides, card), and
    calls whose policy decision set the `require_approval` obligation."""
    tool = call.tool
    requires = tool.requires_human_approval or (tool.llm is not None and tool.llm.requires_human_approval)
    return requires or tool.side_effects is SideEffects.DESTRUCTIVE or call.obligations.require_approval


class ApprovalGate:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        if needs_approval(call):
            status, err = error(
                "P-PRECOND-APPROVAL-REQUIRED",
                f"'{call.tool.canonical_name}' is {call.tool.side_effects.value} and needs a human's "
                "approval; it was not executed",
                tool=call.tool.canonical_name,
            )
            return call.result(status, error=err)
        return await next(call)
