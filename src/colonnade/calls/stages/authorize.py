"""Authorize: may this principal call this tool? One decision, from the gateway's `Authorizer`.

A refusal is answered exactly like an unknown tool (`I-REQ-UNKNOWN-TOOL`), so a caller cannot
probe what other tenants serve. Built-in tools are open to every caller that reached the
pipeline; what they show is filtered by the same authorizer.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.governance.authorization import AllowAll, Authorizer

__all__ = ["Authorize"]


class Authorize:
    def __init__(self, authorizer: Authorizer | None = None) -> None:
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        tool = call.tool
        if tool.builtin or self.authorizer.permits(call.principal, tool):
            return await next(call)
        status, err = error(
            "I-REQ-UNKNOWN-TOOL", f"no tool named '{call.request.tool_id}'", tool_id=call.request.tool_id
        )
        return call.result(status, error=err).model_copy(update={"provenance": None})
