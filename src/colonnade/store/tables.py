"""The store's tables as typed SQLAlchemy declarations; the migrations must produce exactly these.

Constraint names come from one naming convention so that migrations, reflection and error
messages agree on every database. Free-length text is `Text`, so no database truncates or rejects
what another accepts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine

__all__ = [
    "AgentRow",
    "AlertRow",
    "ApiKeyRow",
    "ApprovalRow",
    "AuditRow",
    "Base",
    "ContractRow",
    "DpopProofRow",
    "EndpointRow",
    "ErrorSnapshotRow",
    "IdempotencyRow",
    "MetricsRollupRow",
    "ParkedCallRow",
    "SecretVersionRow",
    "SubscriptionRow",
    "ToolPairRow",
    "ToolUseRow",
    "UpstreamGrantRow",
    "metadata",
]

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# JSONB on PostgreSQL (indexable, compact); plain JSON text elsewhere.
JSON_DOCUMENT: TypeEngine[Any] = JSON().with_variant(JSONB(), "postgresql")

CONTRACT_STATUSES = ("draft", "published", "deprecated")
SIDE_EFFECTS = ("none", "read", "write", "destructive")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


metadata = Base.metadata


class ContractRow(Base):
    """One version of one API of one tenant; `document` is the contract without its status."""

    __tablename__ = "contracts"
    __table_args__ = (
        UniqueConstraint("tenant", "name", "version"),
        CheckConstraint(_in("status", CONTRACT_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    spec_hash: Mapped[str] = mapped_column(String(64))
    document: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class EndpointRow(Base):
    """One operation (path + method) of a stored contract: what the catalog turns into a tool."""

    __tablename__ = "endpoints"
    __table_args__ = (
        UniqueConstraint("contract_id", "path", "method"),
        CheckConstraint(_in("side_effects", SIDE_EFFECTS), name="side_effects"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    contract_id: Mapped[int] = mapped_column(Integer, ForeignKey("contracts.id", ondelete="CASCADE"))
    path: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(String(16))
    operation_id: Mapped[str] = mapped_column(Text)
    tool_name: Mapped[str] = mapped_column(Text)
    canonical_name: Mapped[str] = mapped_column(Text)
    side_effects: Mapped[str | None] = mapped_column(String(16))
    mcp: Mapped[bool] = mapped_column(Boolean)


IDEMPOTENCY_STATES = ("in_flight", "done")
PARK_REASONS = ("prepared", "awaiting_approval", "awaiting_input")
PARKED_STATES = ("parked", "resuming", "resumed", "expiring", "expired", "failed")


class IdempotencyRow(Base):
    """One idempotency key in its scope (tenant|tool|actor): the input it came with and its outcome."""

    __tablename__ = "idempotency_records"
    __table_args__ = (
        UniqueConstraint("scope", "key"),
        CheckConstraint(_in("state", IDEMPOTENCY_STATES), name="state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    scope: Mapped[str] = mapped_column(Text)
    key: Mapped[str] = mapped_column(Text)
    input_hash: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON_DOCUMENT, nullable=True)
    lease_until: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # The attempt holding the key; writes of an attempt whose key was taken over change nothing.
    holder: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ParkedCallRow(Base):
    """A call suspended by a stage (prepared for commit, awaiting approval or input): one token, one expiry.

    `payload` holds what the stage needs to resume it (the prepared output, the approval request);
    `principal` and `tenant` are who parked it, `call_id` the call it parked. Every state change is a
    compare-and-set.
    """

    __tablename__ = "parked_calls"
    __table_args__ = (
        CheckConstraint(_in("reason", PARK_REASONS), name="reason"),
        CheckConstraint(_in("state", PARKED_STATES), name="state"),
    )

    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    reason: Mapped[str] = mapped_column(String(24))
    tool: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(Text)
    principal: Mapped[str] = mapped_column(Text)
    input: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)
    input_hash: Mapped[str] = mapped_column(String(64))
    payload: Mapped[Any] = mapped_column(JSON_DOCUMENT, nullable=True)
    state: Mapped[str] = mapped_column(String(16), index=True)
    deadline: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    attempts: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    call_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True)


class ToolUseRow(Base):
    """In how many sessions a tool was used: the denominator of the router's learned affinity."""

    __tablename__ = "tool_uses"

    tool: Mapped[str] = mapped_column(Text, primary_key=True)
    uses: Mapped[int] = mapped_column(BigInteger)


class ToolPairRow(Base):
    """In how many sessions `other` was used near `given` (both directions are stored)."""

    __tablename__ = "tool_pairs"

    given: Mapped[str] = mapped_column(Text, primary_key=True)
    other: Mapped[str] = mapped_column(Text, primary_key=True)
    together: Mapped[int] = mapped_column(BigInteger)


class AuditRow(Base):
    """One append-only audit record; `hash` seals it and `prev_hash` links it to the record before.

    `seq` has no gaps: the writer gives each record the next number in the transaction that reads
    the chain's tail, so a deleted or inserted record breaks either the numbering or the links.
    Only `tenant` is indexed: every call writes a record, and each index costs every write; time
    follows `seq`, and the other filters of `colonnade audit list` scan.
    """

    __tablename__ = "audit_records"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    kind: Mapped[str] = mapped_column(String(40))
    actor: Mapped[str | None] = mapped_column(Text, nullable=True)
    actor_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True, index=True)
    tool: Mapped[str | None] = mapped_column(Text, nullable=True)
    args_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    decision: Mapped[str | None] = mapped_column(String(8), nullable=True)
    reasons: Mapped[list[str]] = mapped_column(JSON_DOCUMENT)
    outcome: Mapped[str | None] = mapped_column(String(24), nullable=True)
    code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    trace_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    call_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class ApiKeyRow(Base):
    """An API key: its public id and the SHA-256 of its secret (never the secret), and who it acts as."""

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str] = mapped_column(Text, index=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True, index=True)
    persona: Mapped[str] = mapped_column(String(32))
    team: Mapped[str | None] = mapped_column(Text, nullable=True)
    scopes: Mapped[list[str]] = mapped_column(JSON_DOCUMENT)
    label: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    replaced_by: Mapped[str | None] = mapped_column(String(32), nullable=True)


class AgentRow(Base):
    """A registered agent: its tenant, owner, allow-list and (optionally) the public key it proves."""

    __tablename__ = "agents"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    tenant: Mapped[str] = mapped_column(Text, index=True)
    owner: Mapped[str] = mapped_column(Text)
    allowed_tools: Mapped[list[str]] = mapped_column(JSON_DOCUMENT)
    public_key: Mapped[dict[str, Any] | None] = mapped_column(JSON_DOCUMENT, nullable=True)
    key_thumbprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    registered_via: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class DpopProofRow(Base):
    """A DPoP proof already used (its key thumbprint and jti), kept until it could no longer be fresh."""

    __tablename__ = "dpop_proofs"

    proof: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


SUBSCRIPTION_STATES = ("pending", "active", "rejected", "revoked")


class SubscriptionRow(Base):
    """A consumer's subscription to one API of one tenant: pending approval, active, or ended."""

    __tablename__ = "subscriptions"
    __table_args__ = (CheckConstraint(_in("state", SUBSCRIPTION_STATES), name="state"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    subscriber: Mapped[str] = mapped_column(Text, index=True)
    tenant: Mapped[str] = mapped_column(Text, index=True)
    api: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_by: Mapped[str | None] = mapped_column(Text, nullable=True)


APPROVAL_STATES = ("pending", "approved", "denied", "used", "expired")


class ApprovalRow(Base):
    """A call awaiting a human's decision, and the decision: who asked, who decided, and the token's use.

    `id` is the parked call's token; `requester_principal` is the requester as authorized when it
    asked (resuming after approval runs the call as that principal). State changes are compare-and-set.
    """

    __tablename__ = "approvals"
    __table_args__ = (CheckConstraint(_in("state", APPROVAL_STATES), name="state"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant: Mapped[str] = mapped_column(Text, index=True)
    tool: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(Text)
    requester: Mapped[str] = mapped_column(Text)
    requester_principal: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)
    input: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)
    input_hash: Mapped[str] = mapped_column(String(64))
    reasons: Mapped[list[str]] = mapped_column(JSON_DOCUMENT)
    policy_version: Mapped[str | None] = mapped_column(Text, nullable=True)
    state: Mapped[str] = mapped_column(String(16), index=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    confirmed_by: Mapped[str | None] = mapped_column(Text, nullable=True)
    approver: Mapped[str | None] = mapped_column(Text, nullable=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    token: Mapped[str | None] = mapped_column(Text, nullable=True)
    token_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


ALERT_STATES = ("firing", "resolved")


class AlertRow(Base):
    """One alert of the gateway's own rules (`platform/alerts.py`): which rule about what, and its state."""

    __tablename__ = "platform_alerts"
    __table_args__ = (CheckConstraint(_in("state", ALERT_STATES), name="state"),)

    rule: Mapped[str] = mapped_column(String(64), primary_key=True)
    subject: Mapped[str] = mapped_column(String(512), primary_key=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True, index=True)
    state: Mapped[str] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    fired_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ErrorSnapshotRow(Base):
    """One failed call as it was answered: its envelope and its arguments with secrets redacted."""

    __tablename__ = "error_snapshots"

    call_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True, index=True)
    tool: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    code: Mapped[str] = mapped_column(String(64))
    trace_id: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)
    envelope: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT)


class MetricsRollupRow(Base):
    """One replica's counts in one bucket of the metrics history (`observability/metrics_history.py`).

    Keyed by replica, so each row has one writer and replicas never contend; readers add the rows of
    all replicas (the histograms add bucket by bucket).
    """

    __tablename__ = "metrics_rollups"

    resolution_s: Mapped[int] = mapped_column(Integer, primary_key=True)
    start: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    dimension: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject: Mapped[str] = mapped_column(String(512), primary_key=True)
    replica: Mapped[str] = mapped_column(String(128), primary_key=True)
    calls: Mapped[int] = mapped_column(BigInteger)
    errors: Mapped[int] = mapped_column(BigInteger)
    histogram: Mapped[list[int]] = mapped_column(JSON_DOCUMENT)


class UpstreamGrantRow(Base):
    """One person's grant at an upstream OAuth provider (mode user_oauth): the refresh token, sealed.

    `refresh_token` is a `Sealer` value whose context names the provider and the principal, so a
    row copied to another principal does not open; `subject` is whom the upstream sees (no secret).
    """

    __tablename__ = "upstream_grants"

    principal: Mapped[str] = mapped_column(String(300), primary_key=True)
    provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True)
    subject: Mapped[str] = mapped_column(Text)
    scopes: Mapped[list[str]] = mapped_column(JSON_DOCUMENT)
    refresh_token: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RoutingTurnRow(Base):
    """One routing turn (`observability/routing_turns.py`): what a routed session asked, the tools
    its listing showed, and the calls it then made (rewritten while the turn is open)."""

    __tablename__ = "routing_turns"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    session: Mapped[str] = mapped_column(String(64))
    consumer: Mapped[str | None] = mapped_column(Text, nullable=True)
    tenant: Mapped[str | None] = mapped_column(Text, nullable=True, index=True)
    query: Mapped[str] = mapped_column(Text)
    shown: Mapped[list[str]] = mapped_column(JSON_DOCUMENT)
    calls: Mapped[list[dict[str, Any]]] = mapped_column(JSON_DOCUMENT)
    confidence: Mapped[float] = mapped_column(Float)
    fallback: Mapped[bool] = mapped_column(Boolean)


class SecretVersionRow(Base):
    """One version of a stored secret, sealed (`store/sealing.py`); never the value in clear.

    `tenant` is the scope ("*": the gateway's own). The newest version is the one sent; an older one
    keeps verifying until `valid_until` (the rotation's overlap), then a later change purges it.
    """

    __tablename__ = "secret_versions"

    tenant: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    sealed: Mapped[str] = mapped_column(Text)
    key_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[str] = mapped_column(Text)
    valid_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
