"""What one audit record says: who did what to which tool or resource, the decision and the outcome.

Events are built by the pipeline's audit stage (calls), the HTTP edge (authentication failures)
and the governance services (keys, agents, subscriptions, contract publication); the audit log
turns each into a stored row, pseudonymising and scrubbing it on the way.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from colonnade.governance.principal import Principal

__all__ = ["AuditEvent", "EventKind", "parse_kind"]


class EventKind(StrEnum):
    CALL = "call"
    AUTH_FAILURE = "auth.failure"
    KEY_CREATE = "key.create"
    KEY_ROTATE = "key.rotate"
    KEY_REVOKE = "key.revoke"
    AGENT_REGISTER = "agent.register"
    AGENT_REVOKE = "agent.revoke"
    SUBSCRIPTION_REQUEST = "subscription.request"
    SUBSCRIPTION_APPROVE = "subscription.approve"
    SUBSCRIPTION_REJECT = "subscription.reject"
    SUBSCRIPTION_REVOKE = "subscription.revoke"
    CONTRACT_PUBLISH = "contract.publish"
    CONTRACT_DEPRECATE = "contract.deprecate"
    APPROVAL_REQUEST = "approval.request"
    APPROVAL_CONFIRM = "approval.confirm"
    APPROVAL_APPROVE = "approval.approve"
    APPROVAL_DENY = "approval.deny"
    APPROVAL_REFUSE = "approval.refuse"
    """An approval action or an approval token that was refused (self-approval, replay, ...)."""
    APPROVAL_USE = "approval.use"
    APPROVAL_EXPIRE = "approval.expire"
    STEP_SKIP = "step.skip"
    """An agent says it skipped a step of its plan on purpose, and why (no silent skips)."""
    SERVER_TOOL_CHANGE = "server.tool_change"
    """A downstream tool admitted at first listing, or parked (new, changed, blocked): both digests."""
    SERVER_TOOL_APPROVE = "server.tool_approve"
    """One person's approval of a parked downstream tool (the second admits it)."""
    SERVER_TOOL_REFUSE = "server.tool_refuse"
    """An approval of a parked downstream tool that was refused (self-approval, blocked)."""
    DELEGATION_GRANT = "delegation.grant"
    """A delegated token issued by the token exchange (its whole new chain in `actor_chain`)."""
    DELEGATION_REFUSE = "delegation.refuse"
    """A token exchange refused: wider than its parent, too deep, an actor not fit to act."""
    SECRET_SET = "secret.set"
    """A stored secret was set (a first version, or one replacing the others at once): name, version."""
    SECRET_ROTATE = "secret.rotate"
    """A stored secret got a new version; the previous one verifies until the overlap ends."""
    SECRET_DELETE = "secret.delete"
    """A stored secret was deleted, every version of it."""
    SECRET_RESEAL = "secret.reseal"
    """The sealing key ring rotated: stored secrets re-sealed with the new key (key ids, counts)."""
    SIGNING_KEY_ROTATE = "signing_key.rotate"
    """A gateway signing key (approval tokens, development issuer) rotated: new and previous key ids."""


def parse_kind(text: str) -> EventKind:
    """A kind filter as an EventKind; a typo is a ValueError naming the nearest kind and every kind."""
    try:
        return EventKind(text)
    except ValueError:
        kinds = [kind.value for kind in EventKind]
        near = difflib.get_close_matches(text, kinds, n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"{text!r} is not an audit kind{hint}; the kinds are {', '.join(kinds)}") from None


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One thing that happened. `actor` is a principal key; the log pseudonymises personal ones."""

    kind: EventKind
    actor: str | None = None
    actor_kind: str | None = None
    tenant: str | None = None
    tool: str | None = None
    args_hash: str | None = None
    decision: str | None = None
    reasons: tuple[str, ...] = ()
    outcome: str | None = None
    code: str | None = None
    trace_id: str | None = None
    call_id: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    at: datetime = field(default_factory=_now)
    actor_chain: tuple[str, ...] = ()
    """The delegation chain the actor acts through (origin first, the actor last); the log stores
    it in `details.actor_chain`, each key pseudonymised like `actor`."""

    @classmethod
    def by(cls, principal: Principal, kind: EventKind, **fields: Any) -> AuditEvent:
        """An event done by `principal` (in its tenant unless `tenant` says otherwise)."""
        fields.setdefault("tenant", principal.tenant)
        details = dict(fields.pop("details", {}))
        if principal.credential is not None:
            # How the actor authenticated (`api_key:<key id>`, `local`, an issuer), never a secret; a key
            # named `credential` would be redacted by the log's secret rule and tell the reader nothing.
            details.setdefault("authenticated_by", principal.credential)
        fields.setdefault("actor_chain", principal.actor_chain)
        return cls(kind, actor=principal.key, actor_kind=principal.kind.value, details=details, **fields)
