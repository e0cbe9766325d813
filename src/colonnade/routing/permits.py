"""Whether a caller's allowance includes a tool: the one test every listing, search and lookup uses."""

from __future__ import annotations

from colonnade.routing.router import CallerAllowed

__all__ = ["permits"]


def permits(allowed: CallerAllowed, tool_id: str) -> bool:
    """Whether a `CallerAllowed` answer includes the tool with this canonical name."""
    if allowed is None:
        return True
    return allowed(tool_id) if callable(allowed) else tool_id in allowed
