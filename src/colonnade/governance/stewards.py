"""Shared checks of the governance services: may this actor act on that tenant, with that scope.

An actor bound to a tenant acts only within it; an actor without one (a platform admin, the
gateway itself, an operator's CLI) acts on every tenant. Asking about another tenant's resource
is answered like asking about one that does not exist.
"""

from __future__ import annotations

from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.refusals import Forbidden

__all__ = ["in_reach", "require", "tenant_for"]


def require(actor: Principal, scope: str, doing: str) -> None:
    """Refuse unless the actor holds `scope` (the gateway itself always does)."""
    if actor.kind is not PrincipalKind.SYSTEM and not actor.has(scope):
        raise Forbidden(f"{doing} needs the scope {scope}")


def in_reach(actor: Principal, tenant: str | None) -> bool:
    """Whether the actor may see or change a resource of `tenant`."""
    return actor.tenant is None or actor.tenant == tenant


def tenant_for(actor: Principal, requested: str | None) -> str | None:
    """The tenant a new resource belongs to: the requested one if the actor may act there."""
    tenant = requested if requested is not None else actor.tenant
    if not in_reach(actor, tenant):
        raise Forbidden(f"{actor.key} may not act on tenant {tenant!r}")
    return tenant
