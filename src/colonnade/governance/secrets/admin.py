"""Setting, rotating, listing and deleting stored secrets: the rules, for the CLI (and REST later).

Changing secrets needs `colonnade:security:write`, listing them `colonnade:security:read`, within
the actor's tenant (an actor without one, as the CLI's operator, reaches every scope). A value is
sealed before it reaches the store and is never returned, listed or audited: the audit record
names the secret, its scope and versions. `set` replaces at once; `rotate` keeps the previous
version verifying for the overlap, while upstream calls send the new one.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import InvalidRequest, UnknownResource
from colonnade.governance.secrets.vault import SecretVault, scope_of, seal_context
from colonnade.governance.stewards import require, tenant_for
from colonnade.store.sealing import Sealer
from colonnade.store.secrets_repo import GATEWAY_SCOPE, SecretVersion, SecretVersionStore, SecretVersionTaken

__all__ = ["SecretAdmin", "SecretView", "secret_view"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
_MAX_VALUE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class SecretView:
    """One kept version as listed: never its value, nor its sealed bytes."""

    tenant: str | None
    name: str
    version: int
    key_id: str
    created_at: datetime
    created_by: str
    valid_until: datetime | None

    @property
    def current(self) -> bool:
        return self.valid_until is None


def secret_view(record: SecretVersion) -> SecretView:
    tenant = None if record.tenant == GATEWAY_SCOPE else record.tenant
    return SecretView(
        tenant,
        record.name,
        record.version,
        record.key_id,
        record.created_at,
        record.created_by,
        record.valid_until,
    )


class SecretAdmin:
    def __init__(
        self,
        store: SecretVersionStore,
        vault: SecretVault,
        audit: AuditLog | None = None,
        *,
        overlap_s: float = 86_400.0,
        on_change: Callable[[str], Awaitable[None] | None] = lambda name: None,
    ) -> None:
        self.store = store
        self.vault = vault
        self.audit = audit
        self.overlap_s = overlap_s
        self.on_change = on_change
        """Told a changed secret's name once stored (`*`: all re-sealed); the other replicas are told."""

    @property
    def sealer(self) -> Sealer:
        return self.vault.sealer

    async def set(self, actor: Principal, name: str, value: str, *, tenant: str | None = None) -> SecretView:
        """A new version that replaces every earlier one at once (first use, or a leaked value)."""
        require(actor, Scope.SECURITY_WRITE, "setting a secret")
        scope = self._scope(actor, tenant)
        stored = await self._add(actor, scope, name, value, overlap_s=0.0)
        await self._audit(actor, EventKind.SECRET_SET, stored)
        return secret_view(stored)

    async def rotate(
        self,
        actor: Principal,
        name: str,
        value: str,
        *,
        tenant: str | None = None,
        overlap_s: float | None = None,
    ) -> SecretView:
        """A new version sent from now on; the previous ones still verify for the overlap."""
        require(actor, Scope.SECURITY_WRITE, "rotating a secret")
        scope = self._scope(actor, tenant)
        before = await self.store.versions(scope, name)
        if not before:
            raise UnknownResource(
                f"no stored secret {name!r}{_in(scope)}; set it first with `colonnade secrets set`"
            )
        overlap = self.overlap_s if overlap_s is None else overlap_s
        if overlap < 0:
            raise InvalidRequest("the overlap is a number of seconds, zero or more")
        stored = await self._add(actor, scope, name, value, overlap_s=overlap)
        await self._audit(
            actor,
            EventKind.SECRET_ROTATE,
            stored,
            previous_version=before[0].version,
            previous_valid_until=(stored.created_at + timedelta(seconds=overlap)).isoformat(),
        )
        return secret_view(stored)

    async def delete(self, actor: Principal, name: str, *, tenant: str | None = None) -> int:
        require(actor, Scope.SECURITY_WRITE, "deleting a secret")
        scope = self._scope(actor, tenant)
        before = await self.store.versions(scope, name)
        removed = await self.store.delete(scope, name)
        if not removed:
            raise UnknownResource(f"no stored secret {name!r}{_in(scope)}")
        await self._changed(name)
        await self._append(
            actor,
            EventKind.SECRET_DELETE,
            scope,
            {"name": name, "versions": [record.version for record in before]},
        )
        return removed

    async def list(self, actor: Principal, tenant: str | None = None) -> list[SecretView]:
        """Every kept version the actor may see (of one scope when `tenant` is given); no values."""
        require(actor, Scope.SECURITY_READ, "listing secrets")
        wanted = tenant if tenant is not None else actor.tenant
        if wanted is not None:
            tenant_for(actor, wanted)
        records = await self.store.list(wanted)
        return [secret_view(record) for record in records]

    async def reseal(self, actor: Principal, sealer: Sealer) -> int:
        """Seal every stored version again with `sealer`'s current key (after the key ring rotated)."""
        require(actor, Scope.SECURITY_WRITE, "re-sealing secrets")
        resealed = 0
        for record in await self.store.list():
            if record.key_id == sealer.current:
                continue
            context = seal_context(record.tenant, record.name, record.version)
            plain = self.vault.sealer.open(record.sealed, context=context)
            if await self.store.reseal(record, sealer.seal(plain, context=context), sealer.current):
                resealed += 1
        self.vault.sealer = sealer
        await self._changed("*")
        await self._append(
            actor, EventKind.SECRET_RESEAL, None, {"key_id": sealer.current, "resealed": resealed}
        )
        return resealed

    def _scope(self, actor: Principal, tenant: str | None) -> str:
        if tenant is not None and not _TENANT.match(tenant):
            raise InvalidRequest(f"{tenant!r} is not a tenant name (letters, digits, _ and -)")
        return scope_of(tenant_for(actor, tenant))

    async def _add(
        self, actor: Principal, scope: str, name: str, value: str, *, overlap_s: float
    ) -> SecretVersion:
        if not _NAME.match(name):
            raise InvalidRequest(
                f"{name!r} is not a secret name: letters, digits, _ . - (starting with a letter or _), "
                "at most 128"
            )
        raw = value.encode("utf-8")
        if not value.strip():
            raise InvalidRequest(f"the value of {name!r} is empty; give the secret's value")
        if len(raw) > _MAX_VALUE_BYTES:
            raise InvalidRequest(f"the value of {name!r} is over {_MAX_VALUE_BYTES} bytes")
        now = self.vault.clock()
        newest = await self.store.versions(scope, name)
        version = (newest[0].version if newest else 0) + 1
        sealer = self.vault.sealer
        record = SecretVersion(
            scope,
            name,
            version,
            sealer.seal(raw, context=seal_context(scope, name, version)),
            sealer.current,
            now,
            actor.key,
            None,
        )
        try:
            await self.store.add_version(
                record, previous_valid_until=now + timedelta(seconds=overlap_s), now=now
            )
        except SecretVersionTaken:
            raise InvalidRequest(f"the secret {name!r} changed meanwhile; run the command again") from None
        await self._changed(name)
        return record

    async def _changed(self, name: str) -> None:
        self.vault.forget()
        told = self.on_change(name)
        if inspect.isawaitable(told):
            await told

    async def _audit(self, actor: Principal, kind: EventKind, record: SecretVersion, **extra: Any) -> None:
        details = {"name": record.name, "version": record.version, "key_id": record.key_id, **extra}
        await self._append(actor, kind, record.tenant, details)

    async def _append(
        self, actor: Principal, kind: EventKind, scope: str | None, details: dict[str, Any]
    ) -> None:
        if self.audit is None:
            return
        tenant = None if scope in (None, GATEWAY_SCOPE) else scope
        await self.audit.append(AuditEvent.by(actor, kind, tenant=tenant, details=details))


def _in(scope: str) -> str:
    return "" if scope == GATEWAY_SCOPE else f" in tenant {scope}"
