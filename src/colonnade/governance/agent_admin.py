"""Registering, listing and revoking agents: the rules, for the CLI, REST and RFC 7591 alike.

An agent belongs to one tenant and may only ever be allowed tools of that tenant: every pattern
of its allow-list starts with `tenant:`. Its optional public key (a JWK) is the key its tokens
must be bound to (`cnf.jkt`) and its DPoP proofs signed with. Changing agents needs
`colonnade:security:write`, listing them `colonnade:security:read`.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry

from colonnade.catalog.builtins import PLATFORM_NAMESPACE
from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.personas import Scope
from colonnade.governance.plain_data import plain_fields
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import InvalidRequest, UnknownResource
from colonnade.governance.stewards import in_reach, require, tenant_for
from colonnade.store.agents_repo import AgentRecord, AgentStore

__all__ = ["AgentAdmin", "AgentRequest", "agent_view"]

_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MAX_PATTERNS = 500


def agent_view(record: AgentRecord) -> dict[str, Any]:
    """An agent as listed: its record as plain data."""
    shown = plain_fields(record)
    shown["allowed_tools"] = list(record.allowed_tools)
    return shown


@dataclass(frozen=True, slots=True)
class AgentRequest:
    allowed_tools: tuple[str, ...]
    agent_id: str | None = None
    tenant: str | None = None
    owner: str | None = None
    public_key: dict[str, Any] | None = None
    via: str = "cli"


class AgentAdmin:
    def __init__(
        self,
        store: AgentStore,
        audit: AuditLog | None = None,
        *,
        on_change: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.audit = audit
        self.on_change = on_change
        self.on_revoke: Callable[[AgentRecord], Awaitable[None]] | None = None
        """Told each agent revoked, once stored (the runtime deletes its upstream grants)."""

    async def register(self, actor: Principal, request: AgentRequest) -> AgentRecord:
        require(actor, Scope.SECURITY_WRITE, "registering an agent")
        tenant = tenant_for(actor, request.tenant)
        if tenant is None:
            raise InvalidRequest("an agent belongs to one tenant: give its tenant")
        agent_id = request.agent_id or f"agent-{secrets.token_hex(6)}"
        if _AGENT_ID.match(agent_id) is None:
            raise InvalidRequest(
                "an agent id is 1-128 characters of A-Za-z0-9._- (starting with a letter or digit)"
            )
        patterns = _allow_list(tenant, request.allowed_tools)
        public_key, thumbprint = _public_key(request.public_key)
        record = AgentRecord(
            agent_id,
            tenant,
            request.owner or actor.key,
            patterns,
            public_key,
            thumbprint,
            request.via,
            datetime.now(UTC),
        )
        if not await self.store.add(record):
            raise InvalidRequest(f"an agent named {agent_id!r} is registered already")
        await self._changed(actor, EventKind.AGENT_REGISTER, record)
        return record

    async def list(self, actor: Principal) -> list[AgentRecord]:
        require(actor, Scope.SECURITY_READ, "listing agents")
        return await self.store.list(actor.tenant)

    async def revoke(self, actor: Principal, agent_id: str) -> AgentRecord:
        require(actor, Scope.SECURITY_WRITE, "revoking an agent")
        record = await self.store.get(agent_id)
        if record is None or not in_reach(actor, record.tenant):
            raise UnknownResource(f"no agent {agent_id!r}")
        now = datetime.now(UTC)
        if await self.store.revoke(agent_id, now):
            record = replace(record, revoked_at=now)
            await self._changed(actor, EventKind.AGENT_REVOKE, record)
            if self.on_revoke is not None:
                await self.on_revoke(record)
        return record

    async def _changed(self, actor: Principal, kind: EventKind, record: AgentRecord) -> None:
        if self.on_change is not None:
            await self.on_change()
        if self.audit is not None:
            details = {
                "agent_id": record.id,
                "allowed_tools": list(record.allowed_tools),
                "key_thumbprint": record.key_thumbprint,
                "via": record.registered_via,
            }
            await self.audit.append(AuditEvent.by(actor, kind, tenant=record.tenant, details=details))


def _allow_list(tenant: str, patterns: Sequence[str]) -> tuple[str, ...]:
    cleaned = tuple(dict.fromkeys(pattern.strip() for pattern in patterns if pattern.strip()))
    if not cleaned or len(cleaned) > _MAX_PATTERNS:
        raise InvalidRequest(f"an agent needs an allow-list of 1 to {_MAX_PATTERNS} canonical names or globs")
    # The gateway's platform tools belong to no tenant; what they show an agent is its tenant's.
    own = (f"{tenant}:", f"{PLATFORM_NAMESPACE}:")
    foreign = [pattern for pattern in cleaned if not pattern.startswith(own)]
    if foreign:
        raise InvalidRequest(
            f"an agent of tenant {tenant!r} may only be allowed its tenant's tools and the gateway's "
            f"platform tools ({PLATFORM_NAMESPACE}:...): {foreign}"
        )
    return cleaned


def _public_key(jwk: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    if jwk is None:
        return None, None
    if not isinstance(jwk, dict) or "d" in jwk or jwk.get("kty") not in ("EC", "RSA", "OKP"):
        raise InvalidRequest("an agent's key is a public JWK of type EC, RSA or OKP (no private part)")
    try:
        key = JWKRegistry.import_key(jwk)
    except (JoseError, ValueError, TypeError) as exc:
        raise InvalidRequest(f"the agent's key is not a usable JWK: {exc}") from None
    return dict(key.as_dict(private=False)), key.thumbprint()
