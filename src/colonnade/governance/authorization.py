"""Authorization: which tools a principal may see and call, decided in one place.

The pipeline's authorize stage asks `permits` for every call, and every listing (tools/list,
search, REST, pages) asks `visible` for the same decision as a predicate, so what a caller is
shown and what it may call never disagree. A tool the caller may not call is answered exactly
like a tool that does not exist, so refusals do not reveal what other tenants serve.

`AllowAll` is the policy of a gateway without authentication (loopback only); the persona,
scope and tenant rules plug in behind the same two methods.
"""

from __future__ import annotations

from typing import Protocol

from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal
from colonnade.routing.router import CallerAllowed

__all__ = ["AllowAll", "Authorizer", "permits"]


class Authorizer(Protocol):
    def visible(self, principal: Principal) -> CallerAllowed:
        """What the principal may call, as the router takes it (None: everything)."""
        ...

    def permits(self, principal: Principal, tool: Tool) -> bool:
        """Whether the principal may call this tool."""
        ...


class AllowAll:
    """Every principal may call every tool: the policy until authentication is configured."""

    def visible(self, principal: Principal) -> CallerAllowed:
        return None

    def permits(self, principal: Principal, tool: Tool) -> bool:
        return True


def permits(allowed: CallerAllowed, tool_id: str) -> bool:
    """Whether a `visible` answer includes the tool with this canonical name."""
    if allowed is None:
        return True
    return allowed(tool_id) if callable(allowed) else tool_id in allowed
