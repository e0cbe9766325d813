"""Who calls over MCP: the principal the HTTP edge found, or the surface's own (stdio, in-process).

`caller_scope` turns the authorizer's `listed` decision into the per-request scope the routed
tool list uses, so that routed listings, search and calls share one authorization answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from mcp.server.context import ServerRequestContext

from colonnade.governance.authorization import Authorizer
from colonnade.governance.principal import Principal
from colonnade.routing.router import CallerAllowed
from colonnade.surfaces.edge import principal_of_scope

__all__ = ["CallerScope", "caller_scope", "everything", "principal_of"]

CallerScope: TypeAlias = Callable[[ServerRequestContext[Any, Any]], CallerAllowed]
"""What the caller of a request may call."""


def everything(ctx: ServerRequestContext[Any, Any]) -> CallerAllowed:
    """Every tool: the scope without authorization."""
    return None


def principal_of(ctx: ServerRequestContext[Any, Any], default: Principal) -> Principal:
    """The HTTP edge's principal for this request; `default` when there is no HTTP request."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    return principal_of_scope(scope, default) if isinstance(scope, dict) else default


def caller_scope(authorizer: Authorizer, default: Principal) -> CallerScope:
    def scope(ctx: ServerRequestContext[Any, Any]) -> CallerAllowed:
        return authorizer.listed(principal_of(ctx, default))

    return scope
