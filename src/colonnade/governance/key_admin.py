"""Making, listing, rotating and revoking API keys: the rules, for the CLI and REST alike.

Changing keys needs `colonnade:security:write`, listing them `colonnade:security:read`, both
within the actor's tenant. A key never grants more than its maker holds: its scopes must be
allowed by its persona and held by the actor. Agents do not get keys (they use short-lived
tokens). Every change is an audit record; the secret is returned once and never stored.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.identity.api_keys import new_key
from colonnade.governance.personas import PERSONA_SCOPES, Persona, Scope, persona_of
from colonnade.governance.plain_data import plain_fields
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.refusals import Forbidden, InvalidRequest, UnknownResource
from colonnade.governance.stewards import in_reach, require, tenant_for
from colonnade.store.api_keys_repo import ApiKeyRecord, ApiKeyStore

__all__ = ["IssuedKey", "KeyAdmin", "KeyRequest", "key_view"]


def key_view(record: ApiKeyRecord) -> dict[str, Any]:
    """A key as listed: everything but its secret's hash."""
    shown = plain_fields(record, omit=("secret_hash",))
    shown["scopes"] = list(record.scopes)
    return shown


@dataclass(frozen=True, slots=True)
class KeyRequest:
    owner: str
    persona: str
    tenant: str | None = None
    team: str | None = None
    scopes: tuple[str, ...] | None = None
    """None: every scope of the persona (that the maker holds)."""
    expires_in_s: int | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class IssuedKey:
    record: ApiKeyRecord
    token: str
    """The whole key: shown once, never stored."""


class KeyAdmin:
    def __init__(
        self,
        store: ApiKeyStore,
        audit: AuditLog | None = None,
        *,
        overlap_s: float = 86_400.0,
        on_change: Callable[[str], Awaitable[None] | None] = lambda key_id: None,
    ) -> None:
        self.store = store
        self.audit = audit
        self.overlap_s = overlap_s
        self.on_change = on_change
        """Told the id of a key revoked or rotated, once the change is stored (a cache forgets it, the
        other replicas are told); it may be a coroutine function."""
        self.on_revoke: Callable[[ApiKeyRecord], Awaitable[None]] | None = None
        """Told each key revoked, once stored: what was granted to its owner ends with it (the
        runtime deletes the owner's upstream grants)."""

    async def create(self, actor: Principal, request: KeyRequest) -> IssuedKey:
        require(actor, Scope.SECURITY_WRITE, "creating an API key")
        tenant = tenant_for(actor, request.tenant)
        persona = persona_of(request.persona)
        if persona is None or persona is Persona.AGENT:
            raise InvalidRequest(
                f"an API key's persona is one of admin, product_owner, developer, consumer, security "
                f"(agents use short-lived tokens), not {request.persona!r}"
            )
        if tenant is None and persona is not Persona.ADMIN:
            raise InvalidRequest(f"a {persona} key needs a tenant")
        if not request.owner or len(request.owner) > 256:
            raise InvalidRequest("a key needs an owner (the principal id it acts as)")
        if request.owner.partition(":")[0] in {kind.value for kind in PrincipalKind}:
            raise InvalidRequest(
                f"a key's owner is a bare user id (alice), not a principal key ({request.owner!r}): "
                "the key acts as user:<owner>"
            )
        scopes = self._scopes(actor, persona, request.scopes)
        now = datetime.now(UTC)
        expires = now + timedelta(seconds=request.expires_in_s) if request.expires_in_s else None
        made = new_key()
        record = ApiKeyRecord(
            made.key_id,
            made.secret_hash,
            request.owner,
            tenant,
            persona.value,
            request.team,
            scopes,
            request.label,
            now,
            expires,
            None,
            None,
            None,
        )
        await self.store.add(record)
        await self._audit(actor, EventKind.KEY_CREATE, record)
        return IssuedKey(record, made.token)

    async def list(self, actor: Principal) -> list[ApiKeyRecord]:
        require(actor, Scope.SECURITY_READ, "listing API keys")
        return await self.store.list(actor.tenant)

    async def rotate(self, actor: Principal, key_id: str) -> IssuedKey:
        require(actor, Scope.SECURITY_WRITE, "rotating an API key")
        old = await self._visible(actor, key_id)
        if old.revoked_at is not None:
            raise InvalidRequest(f"the API key {key_id} is revoked; create a new one")
        now = datetime.now(UTC)
        overlap_end = now + timedelta(seconds=self.overlap_s)
        old_end = min(overlap_end, old.expires_at) if old.expires_at is not None else overlap_end
        made = new_key()
        successor = replace(
            old,
            id=made.key_id,
            secret_hash=made.secret_hash,
            created_at=now,
            last_used_at=None,
            revoked_at=None,
            replaced_by=None,
        )
        if not await self.store.rotate(key_id, successor, old_end):
            raise InvalidRequest(f"the API key {key_id} was revoked meanwhile; create a new one")
        await self._changed(key_id)
        await self._audit(actor, EventKind.KEY_ROTATE, successor, replaces=key_id, old_valid_until=old_end)
        return IssuedKey(successor, made.token)

    async def revoke(self, actor: Principal, key_id: str) -> ApiKeyRecord:
        require(actor, Scope.SECURITY_WRITE, "revoking an API key")
        record = await self._visible(actor, key_id)
        now = datetime.now(UTC)
        if await self.store.revoke(key_id, now):
            record = replace(record, revoked_at=now)
            await self._changed(key_id)
            await self._audit(actor, EventKind.KEY_REVOKE, record)
            if self.on_revoke is not None:
                await self.on_revoke(record)
        return record

    async def _changed(self, key_id: str) -> None:
        told = self.on_change(key_id)
        if inspect.isawaitable(told):
            await told

    def _scopes(self, actor: Principal, persona: Persona, asked: tuple[str, ...] | None) -> tuple[str, ...]:
        allowed = PERSONA_SCOPES[persona]
        if asked is not None:
            unknown = sorted(set(asked) - allowed)
            if unknown:
                raise InvalidRequest(f"a {persona} key cannot hold {', '.join(unknown)}")
        wanted = frozenset(asked) if asked is not None else allowed
        if actor.kind is not PrincipalKind.SYSTEM:
            beyond = sorted(wanted - actor.scopes)
            if beyond and asked is not None:
                raise Forbidden(f"a key may not grant scopes its maker does not hold: {', '.join(beyond)}")
            wanted = wanted & actor.scopes
        return tuple(sorted(wanted))

    async def _visible(self, actor: Principal, key_id: str) -> ApiKeyRecord:
        record = await self.store.get(key_id)
        if record is None or not in_reach(actor, record.tenant):
            raise UnknownResource(f"no API key {key_id!r}")
        return record

    async def _audit(self, actor: Principal, kind: EventKind, record: ApiKeyRecord, **extra: object) -> None:
        if self.audit is None:
            return
        details = {
            "key_id": record.id,
            "owner": record.owner,
            "persona": record.persona,
            "scopes": list(record.scopes),
            **{
                name: value.isoformat() if isinstance(value, datetime) else value
                for name, value in extra.items()
            },
        }
        await self.audit.append(AuditEvent.by(actor, kind, tenant=record.tenant, details=details))
