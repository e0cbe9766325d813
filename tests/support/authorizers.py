"""Authorizers for tests: a caller that may call only some tools, decided by canonical-name prefix."""

from __future__ import annotations

from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import Decision
from colonnade.governance.principal import Principal
from colonnade.routing.router import CallerAllowed

__all__ = ["OnlyPrefix"]


class OnlyPrefix:
    """Every principal may see and call only the tools whose canonical name starts with `prefix`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def visible(self, principal: Principal) -> CallerAllowed:
        return lambda tool_id: tool_id.startswith(self.prefix)

    def listed(self, principal: Principal) -> CallerAllowed:
        return self.visible(principal)

    def decide(self, principal: Principal, tool: Tool) -> Decision:
        if tool.canonical_name.startswith(self.prefix):
            return Decision.allow(f"prefix {self.prefix}")
        return Decision.hidden(f"not under {self.prefix}")
