"""Who may read what the gateway records about itself across tenants, and who administers it.

Trace events name tools, tenants and servers of the whole gateway, so only an operator reads them:
a caller with the `colonnade:logs:technical` scope who is not bound to one tenant, or the anonymous
caller of a gateway without authentication (which serves loopback only). Administering the gateway
over HTTP (servers, tool admissions; REST and the pages alike) needs `server.admin_api` on and an
administrator, or that same anonymous loopback caller. The policy set in force is read with
`colonnade:security:read` and reloaded with `colonnade:security:write` (or by that caller).
"""

from __future__ import annotations

from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = [
    "OPERATOR_SCOPE",
    "may_administer",
    "may_read_policies",
    "may_read_trace_events",
    "may_reload_policies",
]

OPERATOR_SCOPE = Scope.LOGS_TECHNICAL


def may_read_trace_events(principal: Principal) -> bool:
    if principal.kind is PrincipalKind.ANONYMOUS:
        return True
    return principal.tenant is None and principal.has(OPERATOR_SCOPE)


def may_administer(principal: Principal, admin_api: bool) -> bool:
    if not admin_api:
        return False
    return principal.persona == "admin" or principal.kind is PrincipalKind.ANONYMOUS


def may_read_policies(principal: Principal) -> bool:
    return principal.kind is PrincipalKind.ANONYMOUS or principal.has(Scope.SECURITY_READ)


def may_reload_policies(principal: Principal) -> bool:
    return principal.kind is PrincipalKind.ANONYMOUS or principal.has(Scope.SECURITY_WRITE)
