"""An interactive MCP client's user confirms a call that waits for approval, in either protocol era.

A call parked for approval is answered `pending`. When the client declares form elicitation, its
user is first asked to confirm the call: on 2026-07-28 by an `InputRequiredResult` whose
`request_state` is the approval id (the client retries the call with the user's answer), on
2025-11-25 by an `elicitation/create` request during the call, where the transport has a back
channel (stdio, in-process, and HTTP sessions whose client declared elicitation at `initialize`,
which are answered over SSE: `server.mcp_session_streams`; with that setting off, handshake-era
HTTP clients get `pending` without a question). The answer is recorded on the
approval (declining withdraws the call); it never replaces the approver: the call still waits
for a second person and is answered `pending`. Clients without elicitation get `pending` at once.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colonnade.calls.approvals import ApprovalDesk, ApprovalRecord, is_requester, next_action
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus, Pending
from colonnade.calls.parking import argument_hash
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import GovernanceRefusal

__all__ = [
    "CONFIRM_KEY",
    "STATE_PREFIX",
    "ApprovalConfirmation",
    "answers_confirmation",
    "wants_confirmation",
]

logger = logging.getLogger(__name__)
CONFIRM_KEY = "colonnade/confirm_approval"
"""The key of the confirmation in `input_requests` / `input_responses`."""
STATE_PREFIX = "colonnade-approval:"
"""`request_state` of a confirmation: this prefix and the approval id."""
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Ask an approver to run this call",
            "description": "Yes: the call waits for an approver. No: the call is withdrawn.",
        }
    },
    "required": ["confirm"],
}


def wants_confirmation(result: CallResult) -> bool:
    return result.pending is not None and result.pending.reason == "awaiting_approval"


def answers_confirmation(params: types.CallToolRequestParams) -> bool:
    """A 2026-07-28 retry that carries the answer to a confirmation this surface asked for."""
    return params.request_state is not None and params.request_state.startswith(STATE_PREFIX)


def _elicits(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the client declared form elicitation (a bare `elicitation: {}` counts as form)."""
    capabilities = ctx.session.client_capabilities if ctx.session is not None else None
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _question(record: ApprovalRecord) -> str:
    reasons = "; ".join(record.reasons) or "it needs a human's approval"
    return (
        f"Run {record.tool} with {record.input}? It needs approval ({reasons}). Confirming asks an "
        f"approver (approval {record.id}); declining withdraws the call."
    )


class ApprovalConfirmation:
    def __init__(self, desk: ApprovalDesk) -> None:
        self.desk = desk

    async def ask(
        self, ctx: ServerRequestContext[Any, Any], result: CallResult, principal: Principal
    ) -> CallResult | types.InputRequiredResult:
        """The call was just parked: ask the user to confirm, as the client's era allows."""
        assert result.pending is not None
        if not _elicits(ctx):
            return result
        record = await self.desk.find(result.pending.token)
        if record is None:
            return result
        ask = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=_question(record), requested_schema=_SCHEMA)
        )
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            state = STATE_PREFIX + record.id
            return types.InputRequiredResult(input_requests={CONFIRM_KEY: ask}, request_state=state)
        if not ctx.session.can_send_request:  # HTTP answered as JSON: no back channel for a question
            return result
        try:
            answer = await ctx.session.elicit_form(
                ask.params.message, _SCHEMA, related_request_id=ctx.request_id
            )
        except Exception as exc:  # no back channel, or the client went away: the call stays pending
            logger.info("cannot ask the user to confirm approval %s: %s", record.id, type(exc).__name__)
            return result
        return await self._record(record, principal, answer, result.call_id)

    async def answered(
        self,
        params: types.CallToolRequestParams,
        request: CallRequest,
        principal: Principal,
        tool: str | None,
    ) -> CallResult:
        """A 2026-07-28 retry carrying the user's answer: record it; the call still waits (or ends).

        `tool` is the canonical name the call's tool name stands for (None: no such tool).
        """
        approval_id = (params.request_state or "").removeprefix(STATE_PREFIX)
        record = await self.desk.find(approval_id)
        if (
            record is None
            or not is_requester(principal, record)
            or record.input_hash != argument_hash(request.input)
            or record.tool != tool
        ):
            status, err = error(
                "P-PRECOND-APPROVAL-STATE",
                "request_state does not name an approval of this call; call the tool again without it",
            )
            return CallResult(call_id=request.call_id, status=status, error=err)
        answer = (params.input_responses or {}).get(CONFIRM_KEY)
        return await self._record(record, principal, answer, request.call_id)

    async def _record(
        self, record: ApprovalRecord, principal: Principal, answer: Any, call_id: str
    ) -> CallResult:
        action = getattr(answer, "action", None)
        content = getattr(answer, "content", None) or {}
        try:
            if action == "accept" and content.get("confirm") is True:
                record = await self.desk.confirm(principal, record.id, accepted=True)
            elif action == "decline" or (action == "accept" and content.get("confirm") is False):
                await self.desk.confirm(principal, record.id, accepted=False)
                status, err = error(
                    "P-PRECOND-APPROVAL-DENIED", f"the call was withdrawn by its user (approval {record.id})"
                )
                return CallResult(call_id=call_id, status=status, error=err)
        except GovernanceRefusal as refused:
            status, err = error(refused.code, refused.message)
            return CallResult(call_id=call_id, status=status, error=err)
        return _pending(record, call_id)


def _pending(record: ApprovalRecord, call_id: str) -> CallResult:
    pending = Pending(
        reason="awaiting_approval",
        token=record.id,
        expires_at=record.expires_at,
        next_action=next_action(record.id),
    )
    return CallResult(call_id=call_id, status=CallStatus.PENDING, pending=pending)
