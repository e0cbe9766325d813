"""A server that cannot take requests, as a client of its own endpoint is told: the stable code and fix.

`/mcp` answers a held server's tool calls with a typed result (`S-TOOL-CONFIG` for a definition
that cannot work here, `S-TOOL-COMMAND-UNADMITTED` for a changed pinned command, `S-TOOL-UNAVAILABLE`
for a server that is stopped or restarting). `/servers/{name}/mcp` forwards its other requests
(listings, prompts, resources) to the server itself, so it says the same in a JSON-RPC error: the
registry's code and fix in `error.data`, the reason in the message. A tool call of a server whose
tools were never listed (held before its first start) is not an unknown tool but the server's
state, as a typed result.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from colonnade.calls.call_errors import error, spec_for
from colonnade.calls.envelope import CallResult
from colonnade.mcp_relay.answer import UpstreamDown, UpstreamHeld

__all__ = ["UNAVAILABLE", "code_of", "held_call", "held_error"]

UNAVAILABLE = "S-TOOL-UNAVAILABLE"
"""The code of a server that is stopped, or down and restarting (not held by a decision)."""


def code_of(refused: UpstreamDown) -> str:
    return refused.code if isinstance(refused, UpstreamHeld) else UNAVAILABLE


def held_error(server: str, refused: UpstreamDown) -> MCPError:
    """The JSON-RPC error for a request the server cannot take now."""
    code = code_of(refused)
    data: dict[str, Any] = {"code": code, "fix": spec_for(code).fix, "server": server}
    return MCPError(types.INTERNAL_ERROR, f"{code}: {refused}", data=data)


def held_call(result: CallResult, server: str, tool: str, refused: UpstreamDown) -> CallResult:
    """A call of a tool the endpoint does not know because its server is held: the server's state."""
    status, body = error(
        code_of(refused),
        f"tool {tool!r} cannot be called: {refused}",
        server=server,
        tool_id=tool,
    )
    return result.model_copy(update={"status": status, "error": body})
