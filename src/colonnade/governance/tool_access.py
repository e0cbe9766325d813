"""Who may see and call which tool: tenants, personas, scopes, teams, subscriptions and allow-lists.

Seeing a tool (listings, search, describe, pages) needs `colonnade:catalog:read`, the tool's
tenant (only a platform admin, an admin without a tenant, sees every tenant), and the persona's
reach: admins, consumers and security officers see their tenant's catalog; product owners and
developers their own team's APIs (the contract's `owner`); agents their allow-list, where a tool
not `safe_for_agents` counts only when it is named exactly, never through a glob.

Calling a seen tool needs `colonnade:catalog:read` for reads and `colonnade:catalog:write` for
writes (developers: of non-production APIs only); consumers instead need an active subscription
to the tool's API; an agent may call what its allow-list shows it. The full matrix is in
docs/governance.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import SideEffects
from colonnade.governance.authorization import Decision, permits
from colonnade.governance.personas import Persona, Scope, persona_of
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.reach import TEAM_BOUND
from colonnade.routing.router import CallerAllowed

__all__ = ["NON_PRODUCTION", "Subscribed", "ToolAccess", "allow_listed"]

NON_PRODUCTION = frozenset({"dev", "staging"})
_WRITES = frozenset({SideEffects.WRITE, SideEffects.DESTRUCTIVE})

Subscribed = Callable[[str, str, str], bool]
"""(subscriber principal key, tenant, api) -> whether an active subscription exists."""


def _never(subscriber: str, tenant: str, api: str) -> bool:
    return False


def allow_listed(patterns: Sequence[str], tool: Tool) -> bool:
    """On an agent's allow-list: named exactly, or (for tools safe for agents) matched by a glob."""
    name = tool.canonical_name
    if name in patterns:
        return True
    return tool.safe_for_agents and any(fnmatchcase(name, pattern) for pattern in patterns)


class ToolAccess:
    """The gateway's `Authorizer` once authentication is configured."""

    def __init__(self, catalog: Catalog, subscribed: Subscribed = _never) -> None:
        self.catalog = catalog
        self.subscribed = subscribed

    def visible(self, principal: Principal) -> CallerAllowed:
        if principal.kind is PrincipalKind.SYSTEM:
            return None

        def sees(tool_id: str) -> bool:
            tool = self.catalog.get(tool_id)
            return tool is not None and self._hidden_because(principal, tool) is None

        return sees

    def listed(self, principal: Principal) -> CallerAllowed:
        """`visible`, less a consumer's tools of APIs it has no active subscription to: those it
        browses in the catalog page's API view, where it can ask for one."""
        seen = self.visible(principal)
        if seen is None or persona_of(principal.persona) is not Persona.CONSUMER:
            return seen

        def callable_now(tool_id: str) -> bool:
            tool = self.catalog.get(tool_id)
            if tool is None or not permits(seen, tool_id):
                return False
            return self.subscribed(principal.key, tool.tenant, tool.api)

        return callable_now

    def decide(self, principal: Principal, tool: Tool) -> Decision:
        """A delegated chain's call must be allowed to its acting agent and to its person both."""
        decision = self._decide_alone(principal, tool)
        person = principal.on_behalf_of
        if person is None or not decision.allowed:
            return decision
        theirs = self._decide_alone(person, tool)
        if not theirs.allowed:
            why = "; ".join(theirs.reasons)
            return Decision.refuse(
                theirs.code or "A-AUTH-FORBIDDEN", f"{person.key}, for whom the chain acts, may not: {why}"
            )
        return Decision(
            True, True, (*decision.reasons, *theirs.reasons), approval=(*decision.approval, *theirs.approval)
        )

    def _decide_alone(self, principal: Principal, tool: Tool) -> Decision:
        if principal.kind is PrincipalKind.SYSTEM:
            return Decision.allow("the gateway itself")
        hidden = self._hidden_because(principal, tool)
        if hidden is not None:
            return Decision.hidden(hidden)
        persona = persona_of(principal.persona)
        writes = tool.side_effects in _WRITES
        if persona is Persona.AGENT:
            return Decision.allow("on the agent's allow-list")
        if persona is Persona.CONSUMER:
            if self.subscribed(principal.key, tool.tenant, tool.api):
                return Decision.allow(f"subscribed to {tool.tenant}:{tool.api}")
            return Decision.refuse(
                "A-AUTH-SUBSCRIPTION-REQUIRED", f"no active subscription to {tool.tenant}:{tool.api}"
            )
        if not writes:
            return Decision.allow(f"{persona} reads with {Scope.CATALOG_READ}")
        if not principal.has(Scope.CATALOG_WRITE):
            return Decision.refuse(
                "A-AUTH-FORBIDDEN", f"a {tool.side_effects.value} tool needs {Scope.CATALOG_WRITE}"
            )
        if persona is Persona.DEVELOPER and tool.environment not in NON_PRODUCTION:
            environment = tool.environment or "prod (not declared)"
            return Decision.refuse(
                "A-AUTH-FORBIDDEN",
                f"developers may call write tools of non-production APIs only; this API is {environment}",
            )
        return Decision.allow(f"{persona} writes with {Scope.CATALOG_WRITE}")

    def _hidden_because(self, principal: Principal, tool: Tool) -> str | None:
        """Why the principal may not see the tool at all; None when it may."""
        persona = persona_of(principal.persona)
        if principal.kind is PrincipalKind.ANONYMOUS or persona is None:
            return "no known persona"
        if not principal.has(Scope.CATALOG_READ):
            return f"no {Scope.CATALOG_READ}"
        if principal.tenant is None:
            if persona is not Persona.ADMIN:
                return "not bound to a tenant"
        elif principal.tenant != tool.tenant:
            return "another tenant's tool"
        if persona in TEAM_BOUND and (principal.team is None or principal.team != tool.owner):
            return "another team's API"
        if persona is Persona.AGENT and not allow_listed(principal.allowed_tools or (), tool):
            return "not on the agent's allow-list"
        if principal.on_behalf_of is not None:
            hidden = self._hidden_because(principal.on_behalf_of, tool)
            if hidden is not None:
                return f"hidden from {principal.on_behalf_of.key}, for whom the chain acts: {hidden}"
        return None  # admins, consumers and security officers see their whole tenant
