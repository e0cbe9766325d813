"""The one entry point every surface uses: a request and its principal in, a result out.

Everything else (resolution, authorization, execution, observability) is a pipeline stage; the
service only starts the call. Calls that reach the gateway without a principal (tests, embedding
programs) run as the service's default principal.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.caller_channel import CallerChannel
from colonnade.calls.commit_tool import COMMIT_TOOL, DISCARD_TOOL
from colonnade.calls.envelope import CallRequest, CallResult
from colonnade.calls.pipeline import Pipeline
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal

__all__ = ["CallService"]


class CallService:
    """Turns a CallRequest into a CallResult; never raises for a well-formed request."""

    def __init__(self, pipeline: Pipeline, *, principal: Principal = ANONYMOUS_LOOPBACK) -> None:
        self.pipeline = pipeline
        self.default_principal = principal

    async def call(
        self,
        request: CallRequest,
        principal: Principal | None = None,
        *,
        channel: CallerChannel | None = None,
        session_id: str | None = None,
    ) -> CallResult:
        """Run one call; `channel` and `session_id` are its caller's protocol channel and session,
        when its surface has them."""
        start = Call.start(
            request, principal=principal or self.default_principal, channel=channel, session_id=session_id
        )
        return await self.pipeline.run(start)

    async def commit(
        self, token: str, *, call_id: str | None = None, principal: Principal | None = None
    ) -> CallResult:
        """Phase 2 of a two-phase call: one call of the built-in commit tool."""
        return await self._follow_up(COMMIT_TOOL.canonical_name, token, call_id, principal)

    async def discard(
        self, token: str, *, call_id: str | None = None, principal: Principal | None = None
    ) -> CallResult:
        """The owner gives up a prepared call: one call of the built-in discard tool."""
        return await self._follow_up(DISCARD_TOOL.canonical_name, token, call_id, principal)

    async def _follow_up(
        self, tool_id: str, token: str, call_id: str | None, principal: Principal | None
    ) -> CallResult:
        fields: dict[str, object] = {"tool_id": tool_id, "input": {"commit_token": token}}
        if call_id is not None:
            fields["call_id"] = call_id
        return await self.call(CallRequest.model_validate(fields), principal)
