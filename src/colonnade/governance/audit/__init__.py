"""The audit log: every call, refusal, authentication failure and governance change, hash-chained."""

from colonnade.governance.audit.events import AuditEvent, EventKind, parse_kind
from colonnade.governance.audit.log import AuditLog, AuditUnavailable
from colonnade.governance.audit.verify import ChainBreak, ChainReport, verify_chain

__all__ = [
    "AuditEvent",
    "AuditLog",
    "AuditUnavailable",
    "ChainBreak",
    "ChainReport",
    "EventKind",
    "parse_kind",
    "verify_chain",
]
