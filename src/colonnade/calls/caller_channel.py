"""The caller's protocol channel, as a call carries it: a value on `Call`, opaque to the stages.

A surface that can carry more than arguments and a result (progress, questions, cancellation: the
MCP surfaces) puts its caller's channel on the call; the execute stage hands it to the adapter in
the `Invocation`, and the adapter of the call's binding uses it (an MCP `Relay`). The one stage that
looks at it, the approval gate, needs only what this protocol names, so no stage knows a protocol.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["CallerChannel"]


class CallerChannel(Protocol):
    @property
    def continues(self) -> str | None:
        """The answer round of an approved call that this request answers, if it answers one."""

    @property
    def passes_input_rounds(self) -> bool:
        """Whether a question the tool asks goes back to the caller as an input round to answer."""
