"""Failed calls as the audit log records them, within what the caller may read.

A caller with a log scope (technical, functional or full: the tools' access decides) reads its
tenant's records (every tenant's without one), and only those of tools it may see, so a developer
reads its team's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from colonnade.governance.audit import AuditLog
from colonnade.governance.audit.readers import AuditFilter, AuditReach, StoredAudit, read_records
from colonnade.governance.authorization import permits
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.platform.services import PlatformServices, need

__all__ = ["FAILED", "LOG_SCOPES", "failed_calls", "log_reach"]

LOG_SCOPES = (Scope.LOGS_TECHNICAL, Scope.LOGS_FUNCTIONAL, Scope.LOGS_FULL)
FAILED = frozenset({"retryable_error", "terminal_error", "invalid_request", "fault", "cancelled"})
MAX_RECORDS = 5000


def log_reach(principal: Principal) -> AuditReach:
    """The caller's tenant (every tenant without one); the tools' scopes decided who gets here."""
    return AuditReach(principal.tenant)


async def failed_calls(
    services: PlatformServices,
    principal: Principal,
    *,
    window_minutes: int,
    limit: int = MAX_RECORDS,
    tool: str | None = None,
    call_id: str | None = None,
) -> list[StoredAudit]:
    """The caller's failed calls of the last `window_minutes`, newest last."""
    audit: AuditLog = need(services.audit, "an audit log")
    since = datetime.now(UTC) - timedelta(minutes=window_minutes)
    where = AuditFilter(kind="call", tool=tool, since=since)
    records = await read_records(audit, log_reach(principal), where, MAX_RECORDS)
    allowed = services.authorizer.visible(principal)
    failed = [
        record
        for record in records
        if record.outcome in FAILED
        and (call_id is None or record.call_id == call_id)
        and (record.tool is None or permits(allowed, record.tool))
    ]
    return failed[-limit:]
