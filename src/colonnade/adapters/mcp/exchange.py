"""One request to a downstream MCP server on behalf of one caller, input rounds included.

The request carries what the caller's connection says about itself (its client capabilities, its
log opt-in, its own `_meta`) and the caller's answers to a previous input round; its progress goes
to the caller. When the server asks for input and the caller can be asked in the middle of a call
(a handshake-era client), the questions are put to it and the request is sent again with the
answers, within the same deadline; a 2026-07-28 caller gets the input round itself. The answer is
the server's result as it was sent (the SDK validated it; a first round sent directly, by
`direct_post.py`, checked that it is a JSON object). Later rounds always go through the session.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ClientMessageMetadata
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from colonnade.adapters.mcp.direct_post import NotTaken
from colonnade.adapters.mcp.wire import OVERRIDE_CAPABILITIES
from colonnade.mcp_relay.relay import Relay
from colonnade.observability.tracing import with_trace

__all__ = ["MAX_INPUT_ROUNDS", "Build", "First", "exchange"]

Build = Callable[[types.InputResponses | None, str | None, dict[str, Any]], Any]
"""Builds the request from (input responses, request state, `_meta`)."""

First = Callable[[float], Awaitable[dict[str, Any]]]
"""Sends the first round another way than through the session, within the seconds it is given
(raises `NotTaken` when the server did not take it)."""

MAX_INPUT_ROUNDS = 8


class _Raw(BaseModel):
    """The result type of a proxied request: the server's answer as sent (the SDK validated it first)."""

    model_config = ConfigDict(extra="allow")


async def exchange(
    session: ClientSession,
    build: Build,
    relay: Relay,
    deadline: float,
    *,
    metadata: ClientMessageMetadata | None = None,
    first: First | None = None,
    trace: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The server's answer, after the input rounds the caller can be asked (`first` sends the first);
    `trace` (W3C trace context) goes into every round's `_meta`.

    Raises `MCPError` (the server's error, a timeout, a lost connection) or pydantic's
    `ValidationError` (an answer that is not a valid result).
    """
    meta = _meta_for(relay, session, trace)
    answer: dict[str, Any] | None = None
    if first is not None:
        try:
            answer = await first(max(0.001, deadline - time.monotonic()))
        except NotTaken:
            answer = None
    if answer is None:
        request = build(relay.input_responses, relay.request_state, meta)
        answer = await _send(session, request, relay, deadline, metadata)
    rounds = 0
    while is_input_required(answer) and relay.can_ask and not relay.passes_input_rounds:
        rounds += 1
        if rounds > MAX_INPUT_ROUNDS:
            raise MCPError(
                types.INTERNAL_ERROR, f"the server asked for input more than {MAX_INPUT_ROUNDS} times"
            )
        asked = types.InputRequiredResult.model_validate(answer, by_name=False)
        answers = await _answers(relay, asked)
        request = build(answers, asked.request_state, meta)
        answer = await _send(session, request, relay, deadline, metadata)
    return answer


async def _send(
    session: ClientSession,
    request: Any,
    relay: Relay,
    deadline: float,
    metadata: ClientMessageMetadata | None,
) -> dict[str, Any]:
    answer = await session.send_request(
        request,
        _Raw,
        request_read_timeout_seconds=max(0.001, deadline - time.monotonic()),
        progress_callback=relay.progress,
        metadata=metadata,
    )
    return dict(answer.model_extra or {})


def _meta_for(relay: Relay, session: ClientSession, trace: Mapping[str, str] | None) -> dict[str, Any]:
    meta = {**with_trace(relay.meta, trace), OVERRIDE_CAPABILITIES: relay.client_capabilities}
    if relay.log_level is not None and session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        meta[types.LOG_LEVEL_META_KEY] = relay.log_level
    return meta


async def _answers(relay: Relay, asked: types.InputRequiredResult) -> types.InputResponses:
    answers: types.InputResponses = {}
    for key, request in (asked.input_requests or {}).items():
        answer = await relay.ask(request)
        if isinstance(answer, types.ErrorData):
            raise MCPError.from_error_data(answer)
        answers[key] = answer
    return answers
