"""What the pipeline hands a surface beside a call's envelope, never on the wire.

A surface renders a `CallResult`; some surfaces render more than the envelope says. `/mcp` passes a
downstream server's own answer on unchanged, seals the approval gate's answer round into the input
round it hands out, and reads which tool the call resolved to (routing, proxied replays). These
facts travel on the result as one value (`CallResult.handover`), set by the stage that knows each:
the resolve stage (the tool), the execute stage (the backend's answer from the adapter's outcome),
the approval gate (the answer round), the rate-limit stage (each limit's use, for REST's
RateLimit headers). Nothing here names a protocol: the answer is the adapter's own value, opaque
to the stages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from colonnade.catalog.tool import Tool
    from colonnade.governance.limits.limiter import LimitUsage

__all__ = ["NOTHING_HANDED_OVER", "Handover"]


@dataclass(frozen=True, slots=True)
class Handover:
    tool: Tool | None = None
    """The tool the call resolved to (None when it resolved to none)."""
    answer: object | None = None
    """The backend's own answer as its adapter reported it (a proxied MCP call's), when there is one."""
    continuation: str | None = None
    """The answer round the approval gate parked for the question an approved call's tool asked."""
    limits: tuple[LimitUsage, ...] = ()
    """Where the call left each rate limit it counted under (REST's RateLimit headers)."""


NOTHING_HANDED_OVER = Handover()
