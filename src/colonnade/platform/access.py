"""Who may see and call the platform's core tools: ADR-012's persona matrix, behind the `Authorizer`.

`PlatformAccess` wraps the gateway's authorizer, so every listing, lookup and the pipeline's
authorize stage ask one object. A core tool is seen by the personas its definition names (an agent
only when its allow-list names the tool) and called with one of its scopes; any other tool is the
wrapped authorizer's business. A caller the wrapped authorizer lets see everything (a gateway
without authentication, the gateway itself) sees every core tool too. What a core tool then shows
(one tenant, one's own subscriptions) is filtered by the governance service it calls. A security
officer reads, and writes only through approval: its write calls are parked for an approver.
"""

from __future__ import annotations

from collections.abc import Iterable

from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import Authorizer, Decision, permits
from colonnade.governance.personas import Persona, persona_of
from colonnade.governance.principal import Principal
from colonnade.governance.tool_access import allow_listed
from colonnade.platform.core_tool import CoreTool
from colonnade.routing.router import CallerAllowed

__all__ = ["PlatformAccess", "core_decision"]


def core_decision(principal: Principal, core: CoreTool) -> Decision:
    """ADR-012's answer for one caller and one core tool (for a caller with no blanket allowance)."""
    persona = persona_of(principal.persona)
    if persona is None or persona not in core.personas:
        return Decision.hidden(f"{core.name} is not for the {persona or 'unknown'} persona")
    if persona is Persona.AGENT and not allow_listed(principal.allowed_tools or (), core.tool):
        return Decision.hidden("not on the agent's allow-list")
    if not any(principal.has(scope) for scope in core.scopes):
        needs = " or ".join(core.scopes)
        return Decision.refuse("A-AUTH-FORBIDDEN", f"{core.name} needs {needs}")
    if persona is Persona.SECURITY and core.writes:
        return Decision.allow_after_approval(
            f"a security officer changes {core.name} only with a human's approval (ADR-012)",
            f"{persona} uses {core.name} (ADR-012)",
        )
    return Decision.allow(f"{persona} uses {core.name} (ADR-012)")


class PlatformAccess:
    """The gateway's `Authorizer`: core tools by ADR-012's matrix, every other tool by `base`."""

    def __init__(self, base: Authorizer, core_tools: Iterable[CoreTool]) -> None:
        self.base = base
        self._core = {core.canonical_name: core for core in core_tools}

    def visible(self, principal: Principal) -> CallerAllowed:
        allowed = self.base.visible(principal)
        if allowed is None:
            return None
        core = self._core

        def sees(tool_id: str) -> bool:
            found = core.get(tool_id)
            if found is None:
                return permits(allowed, tool_id)
            return core_decision(principal, found).visible

        return sees

    def listed(self, principal: Principal) -> CallerAllowed:
        listed, seen = self.base.listed(principal), self.visible(principal)
        if listed is None or seen is None:
            return listed if seen is not None else None
        core = self._core

        def shows(tool_id: str) -> bool:
            return permits(seen if tool_id in core else listed, tool_id)

        return shows

    def decide(self, principal: Principal, tool: Tool) -> Decision:
        found = self._core.get(tool.canonical_name)
        if found is None:
            return self.base.decide(principal, tool)
        if self.base.visible(principal) is None:
            return Decision.allow("the caller may see every tool")
        return core_decision(principal, found)
