"""What a downstream MCP server answered a call, or that it could not take one.

The adapter reports the answer in its outcome and the pipeline hands it to the surface on the
result (`Handover.answer`), which passes it on unchanged; `UpstreamDown` is raised by a server's
session to whoever sent it a request (the adapter, or the per-server endpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.shared.exceptions import MCPError

__all__ = ["UpstreamAnswer", "UpstreamDown", "UpstreamHeld", "answer_of"]


class UpstreamDown(Exception):
    """The server cannot take calls now; the message says why and since when."""


class UpstreamHeld(UpstreamDown):
    """The server is held down until someone acts (its definition is fixed, or its changed command is
    re-admitted): no restart is tried meanwhile. `code` is the call's typed outcome."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(slots=True)
class UpstreamAnswer:
    """What the downstream server answered the last round of a call: a result, or a JSON-RPC error."""

    result: dict[str, Any] | None = None
    error: MCPError | None = None


def answer_of(answer: object | None) -> UpstreamAnswer:
    """A downstream server's answer as a call's result hands it over (`Handover.answer`); empty when
    no server answered (the call ended before, or went elsewhere)."""
    return answer if isinstance(answer, UpstreamAnswer) else _NO_ANSWER


_NO_ANSWER = UpstreamAnswer()
