"""The caller's MCP connection, as one proxied tool call may use it.

A tool call to a downstream MCP server is more than arguments in and a result out: the server may
report progress, log, ask the user a question (sampling, elicitation, roots) or need another round
with the user's answers. None of that is governance, and the call envelope does not model it, so a
surface that can carry it puts a `Relay` on the call as its channel (`Call.channel`, handed to the
adapter in its `Invocation`): a value, never state beside the call. The base `Relay` is a caller
that can be told nothing and asked nothing; the MCP surfaces implement the rest for their clients
(the per-server endpoint's `EndpointRelay`, and `/mcp`'s `CallerRelay` for calls of proxied
tools, built on first use through a `Channel`, as most calls of `/mcp` never need one). The
server's own answer comes back the other way (`answer.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

__all__ = ["Channel", "Relay", "relay_of"]


@dataclass(eq=False)
class Relay:
    """A caller that can be told nothing and asked nothing; subclasses relay more.

    `client_capabilities` (wire form) are the capabilities the downstream server is told the caller
    has; `log_level` opts in to its log messages; `wants_progress` says the caller listens for
    progress; `meta` is the caller's own `_meta` to pass on; `input_responses` and `request_state`
    are the caller's answers to a previous input round.
    """

    client_capabilities: dict[str, Any] = field(default_factory=dict)
    log_level: types.LoggingLevel | None = None
    wants_progress: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    input_responses: types.InputResponses | None = None
    request_state: str | None = None
    continues: str | None = None
    """The answer round of an approved call this request answers (from the state it carried)."""

    @property
    def passes_input_rounds(self) -> bool:
        """Whether an input round goes back to the caller as it is (2026-07-28 clients retry it)."""
        return False

    @property
    def handshake_era(self) -> bool:
        """Whether the caller speaks the handshake era (then so does the session its call goes to)."""
        return False

    @property
    def quiet(self) -> bool:
        """Whether nothing but the answer can pass between the server and the caller during the call:
        no progress listened for, no log messages, no question the caller can be asked, no input
        round answered."""
        return not (
            self.wants_progress
            or self.log_level is not None
            or self.input_responses is not None
            or self.request_state is not None
            or self.can_ask
        )

    @property
    def needs_handshake_session(self) -> bool:
        """Whether the call must reach the server on a session of the caller's handshake era.

        A quiet call of a handshake-era caller does not: only its answer comes back, and the server's
        own 2026-07-28 session carries that answer for less (`McpPool.for_caller`; the SDK's server
        side serves it to the caller in the caller's era, as on `/mcp`)."""
        return self.handshake_era and not self.quiet

    @property
    def follows_stream_closes(self) -> bool:
        """Whether the caller's stream can be closed for a resumption, as the server closed its own."""
        return False

    async def stream_closed(self) -> None:
        """The server closed this call's stream before answering; the answer will follow a resumption."""
        return None

    @property
    def can_ask(self) -> bool:
        """Whether the caller can be asked a question in the middle of the call (handshake-era clients)."""
        return False

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        return None

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        return None

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        return types.ErrorData(code=types.INVALID_REQUEST, message="the caller cannot be asked for input")


class Channel:
    """A caller's relay as a call carries it, built on first use: a call that never reaches a
    downstream server (most of `/mcp`'s) never builds one."""

    def __init__(self, build: Callable[[], Relay]) -> None:
        self._build = build

    @functools.cached_property
    def relay(self) -> Relay:
        return self._build()

    @property
    def continues(self) -> str | None:
        return self.relay.continues

    @property
    def passes_input_rounds(self) -> bool:
        return self.relay.passes_input_rounds


def relay_of(channel: object | None) -> Relay:
    """The relay of a call's channel (`Invocation.channel`); a caller who hears nothing without one."""
    if isinstance(channel, Relay):
        return channel
    if isinstance(channel, Channel):
        return channel.relay
    return Relay()
