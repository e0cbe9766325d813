"""Who may read the audit log through the gateway, and how much of it.

Reading who did what is a log scope: `colonnade:logs:functional` or `colonnade:logs:full`. A
reader bound to a tenant reads only that tenant's records (tenant isolation holds for the audit
log as for tools); a reader bound to none (an operator) reads every record.
"""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal

__all__ = ["AUDIT_READ_SCOPES", "AuditReach", "audit_reach"]

AUDIT_READ_SCOPES = (Scope.LOGS_FUNCTIONAL, Scope.LOGS_FULL)


@dataclass(frozen=True, slots=True)
class AuditReach:
    """The records a reader may see: one tenant's, or (None) every record."""

    tenant: str | None

    @property
    def everything(self) -> bool:
        return self.tenant is None


def audit_reach(principal: Principal) -> AuditReach | None:
    """None when the principal may not read the audit log at all."""
    if not any(principal.has(scope) for scope in AUDIT_READ_SCOPES):
        return None
    return AuditReach(principal.tenant)
