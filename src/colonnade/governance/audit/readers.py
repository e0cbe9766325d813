"""Who may read the audit log through the gateway, and how much of it.

Reading who did what is a log scope: `colonnade:logs:functional` or `colonnade:logs:full`. A
reader bound to a tenant reads only that tenant's records (tenant isolation holds for the audit
log as for tools); a reader bound to none (an operator) reads every record. Surfaces read the log
through `read_records` and `chain_report`, never its store.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from colonnade.governance.audit.log import AuditLog
from colonnade.governance.audit.verify import ChainReport, verify_chain
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.store.audit_repo import AuditFilter, StoredAudit

__all__ = [
    "AUDIT_READ_SCOPES",
    "AuditFilter",
    "AuditReach",
    "StoredAudit",
    "audit_reach",
    "chain_report",
    "read_records",
]

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


async def read_records(
    audit: AuditLog, reach: AuditReach, where: AuditFilter, limit: int
) -> list[StoredAudit]:
    """The newest `limit` records `where` selects within the reader's reach, oldest first."""
    return await audit.store.query(replace(where, tenant=reach.tenant), limit)


async def chain_report(audit: AuditLog) -> ChainReport:
    """Whether the whole chain still verifies (reads every record)."""
    return await verify_chain(audit.store)
