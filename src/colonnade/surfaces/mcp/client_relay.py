"""A caller of the aggregate `/mcp`, as a proxied MCP tool call relays to it.

The per-server endpoint's `EndpointRelay` (progress to the caller's token, questions on the call's
stream of a handshake-era client), with three differences that `/mcp` needs:

- Every caller's call goes to the server's own session, never to the handshake-era twin: a server
  that speaks 2026-07-28 then asks in input rounds of that one call, so a handshake-era caller's
  questions are put to it (and to no other caller), and a caller that cannot be asked gets the
  typed `P-PRECOND-INPUT-REQUIRED`, not an error from a server whose question was refused.
- A caller takes questions only when it declared elicitation, sampling or roots (a handshake-era
  one also needs a back channel: stdio, in process, or an HTTP session answered over SSE); a
  2026-07-28 caller gets an input round only when it declared what each of its questions needs.
- The server's `request_state` travels to a 2026-07-28 caller behind `STATE_PREFIX`, and only a
  state with that prefix goes back to the server: neither it nor the approval confirmation's state
  (`colonnade-approval:`) can be taken for the other.

A caller opts in to the server's log messages with its `_meta` log level (2026-07-28) or its
connection's `logging/setLevel` (handshake era); without either it gets none of them.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colonnade.calls.call_errors import INPUT_REQUIRED
from colonnade.calls.envelope import CallResult
from colonnade.mcp_relay.answer import answer_of
from colonnade.surfaces.mcp.proxy.endpoint import _LEVELS, PROGRESS_KEYS, EndpointRelay, _passable
from colonnade.surfaces.mcp.round_state import open_state, seal_state

__all__ = ["STATE_PREFIX", "CallerRelay"]

Ctx = ServerRequestContext[Any, Any]
STATE_PREFIX = "colonnade-upstream:"
"""`request_state` of a server's input round as `/mcp` hands it out: this prefix and the server's own."""


class CallerRelay(EndpointRelay):
    """An `/mcp` caller: asked (or handed input rounds) only if it declared it can answer."""

    def __init__(self, ctx: Ctx, *, answers: bool, **fields: Any) -> None:
        super().__init__(ctx, **fields)
        self.answers = answers

    @classmethod
    def of(
        cls, ctx: Ctx, params: types.CallToolRequestParams, *, level: types.LoggingLevel | None = None
    ) -> CallerRelay:
        """The relay of one tools/call, from the caller's connection (`level`: its `logging/setLevel`)
        and the call's `_meta`."""
        caps = ctx.session.client_capabilities if ctx.session is not None else None
        meta = dict(params.meta or {})
        asked: Any = (
            meta.get(types.LOG_LEVEL_META_KEY) if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else level
        )
        approved = open_state(params.request_state)  # answering an approved call's question
        return cls(
            ctx,
            answers=caps is not None and any((caps.elicitation, caps.sampling, caps.roots)),
            log_level=asked if asked in _LEVELS else None,
            wants_progress=not PROGRESS_KEYS.isdisjoint(meta),
            client_capabilities=caps.model_dump(by_alias=True, mode="json", exclude_none=True)
            if caps
            else {},
            meta={key: value for key, value in meta.items() if _passable(key)},
            input_responses=params.input_responses,
            request_state=_servers_state(params.request_state) if approved is None else approved[1],
            continues=approved[0] if approved is not None else None,
        )

    @property
    def handshake_era(self) -> bool:
        return False

    @property
    def can_ask(self) -> bool:
        return self.answers and super().can_ask

    @property
    def passes_input_rounds(self) -> bool:
        return self.answers and super().passes_input_rounds

    def input_round(self, result: CallResult) -> types.InputRequiredResult | None:
        """The server's input round, when the call ended on one this caller takes as it is."""
        raw = answer_of(result.handover.answer).result
        code = result.error.code if result.error is not None else None
        if code != INPUT_REQUIRED or raw is None or not is_input_required(raw):
            return None
        if not self.passes_input_rounds:
            return None
        asked = types.InputRequiredResult.model_validate(raw, by_name=False)
        if not all(_capability(r) in self.client_capabilities for r in (asked.input_requests or {}).values()):
            return None  # a question the caller said it cannot answer: the typed result says so
        continuation = result.handover.continuation
        if continuation is not None:  # an approved call's question: its answer continues the call
            sealed = seal_state(continuation, asked.request_state)
            return asked.model_copy(update={"request_state": sealed})
        if asked.request_state is None:
            return asked
        return asked.model_copy(update={"request_state": STATE_PREFIX + asked.request_state})


def _capability(request: types.InputRequest) -> str:
    """The client capability a question needs (wire name)."""
    if isinstance(request, types.ElicitRequest):
        return "elicitation"
    if isinstance(request, types.CreateMessageRequest):
        return "sampling"
    return "roots"


def _servers_state(state: str | None) -> str | None:
    """The server's own state from a caller's retry; any other state is not the server's to see."""
    if state is None or not state.startswith(STATE_PREFIX):
        return None
    return state.removeprefix(STATE_PREFIX)
