"""Subscriptions: a consumer subscribes to an API, optionally waits for its product owner's approval,
and may then call the API's tools.

`SubscriptionBook` holds the active ones in memory for the authorizer's synchronous checks (a
snapshot replaced after every change here and on each poll). `SubscriptionAdmin` holds the rules:
requesting needs `colonnade:subscriptions:write` (for oneself; admins may subscribe others),
approving or rejecting needs the same scope and to own the API (its team's product owner, or an
admin of the tenant); listing shows one's own, and to product owners and admins those of the APIs
they own. APIs matching `auth.subscription_approval` start pending; the others are active at once.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from fnmatch import fnmatchcase

from colonnade.catalog.catalog import Catalog
from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.personas import Persona, Scope, persona_of
from colonnade.governance.principal import Principal, PrincipalKind, parse_principal_key
from colonnade.governance.refusals import Forbidden, InvalidRequest, UnknownResource
from colonnade.governance.stewards import in_reach, require
from colonnade.store.subscriptions_repo import SubscriptionRecord, SubscriptionStore

__all__ = ["SubscriptionAdmin", "SubscriptionBook"]

_LIVE = ("pending", "active")


class SubscriptionBook:
    """Active subscriptions as (subscriber, tenant, api)."""

    def __init__(self) -> None:
        self._active: frozenset[tuple[str, str, str]] = frozenset()

    def replace(self, records: Iterable[SubscriptionRecord]) -> None:
        self._active = frozenset((r.subscriber, r.tenant, r.api) for r in records if r.state == "active")

    def active(self, subscriber: str, tenant: str, api: str) -> bool:
        return (subscriber, tenant, api) in self._active


class SubscriptionAdmin:
    def __init__(
        self,
        store: SubscriptionStore,
        catalog: Catalog,
        book: SubscriptionBook,
        audit: AuditLog | None = None,
        *,
        approval: Sequence[str] = (),
        on_change: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.on_change = on_change
        """Told the id of a subscription that changed, after this gateway's book was refreshed."""
        self.catalog = catalog
        self.book = book
        self.audit = audit
        self.approval = tuple(approval)

    async def refresh(self) -> None:
        self.book.replace(await self.store.list(states=("active",)))

    async def request(self, actor: Principal, api: str, subscriber: str | None = None) -> SubscriptionRecord:
        require(actor, Scope.SUBSCRIPTIONS_WRITE, "subscribing to an API")
        tenant, name = self._served_api(actor, api)
        who = _subscriber_key(subscriber) if subscriber is not None else actor.key
        if who != actor.key and not _administers(actor, tenant):
            raise Forbidden("only an admin may subscribe someone else")
        for existing in await self.store.list(tenant=tenant, subscriber=who, states=_LIVE):
            if existing.api == name:
                return existing
        now = datetime.now(UTC)
        state = "pending" if any(fnmatchcase(f"{tenant}:{name}", p) for p in self.approval) else "active"
        record = SubscriptionRecord(f"sub_{secrets.token_hex(8)}", who, tenant, name, state, now, now)
        await self.store.add(record)
        await self._changed(actor, EventKind.SUBSCRIPTION_REQUEST, record)
        return record

    async def list(self, actor: Principal) -> list[SubscriptionRecord]:
        require(actor, Scope.SUBSCRIPTIONS_READ, "listing subscriptions")
        records = await self.store.list(tenant=actor.tenant)
        return [r for r in records if r.subscriber == actor.key or self._owns(actor, r)]

    async def approve(self, actor: Principal, subscription_id: str) -> SubscriptionRecord:
        return await self._decide(
            actor, subscription_id, ("pending",), "active", EventKind.SUBSCRIPTION_APPROVE
        )

    async def reject(self, actor: Principal, subscription_id: str) -> SubscriptionRecord:
        return await self._decide(
            actor, subscription_id, ("pending",), "rejected", EventKind.SUBSCRIPTION_REJECT
        )

    async def revoke(self, actor: Principal, subscription_id: str) -> SubscriptionRecord:
        """End a subscription: its subscriber may, and so may whoever owns the API."""
        record = await self._visible(actor, subscription_id)
        require(actor, Scope.SUBSCRIPTIONS_WRITE, "ending a subscription")
        if record.subscriber != actor.key and not self._owns(actor, record):
            raise Forbidden("only the subscriber or the API's owner may end a subscription")
        return await self._move(actor, record, _LIVE, "revoked", EventKind.SUBSCRIPTION_REVOKE)

    async def _decide(
        self, actor: Principal, subscription_id: str, sources: tuple[str, ...], target: str, kind: EventKind
    ) -> SubscriptionRecord:
        record = await self._visible(actor, subscription_id)
        require(actor, Scope.SUBSCRIPTIONS_WRITE, "deciding on a subscription")
        if not self._owns(actor, record):
            raise Forbidden(f"only the product owner of {record.tenant}:{record.api} or an admin may decide")
        return await self._move(actor, record, sources, target, kind)

    async def _move(
        self,
        actor: Principal,
        record: SubscriptionRecord,
        sources: tuple[str, ...],
        target: str,
        kind: EventKind,
    ) -> SubscriptionRecord:
        now = datetime.now(UTC)
        if not await self.store.transition(record.id, sources, target, actor.key, now):
            raise InvalidRequest(
                f"the subscription {record.id} is {record.state}, not {' or '.join(sources)}"
            )
        moved = replace(record, state=target, updated_at=now, decided_by=actor.key)
        await self._changed(actor, kind, moved)
        return moved

    async def _visible(self, actor: Principal, subscription_id: str) -> SubscriptionRecord:
        record = await self.store.get(subscription_id)
        if record is None or not in_reach(actor, record.tenant):
            raise UnknownResource(f"no subscription {subscription_id!r}")
        if record.subscriber != actor.key and not self._owns(actor, record):
            raise UnknownResource(f"no subscription {subscription_id!r}")
        return record

    def _owns(self, actor: Principal, record: SubscriptionRecord) -> bool:
        """Whether the actor answers for the API: an admin of its tenant, or its team's product owner."""
        if _administers(actor, record.tenant):
            return True
        return (
            persona_of(actor.persona) is Persona.PRODUCT_OWNER
            and actor.tenant == record.tenant
            and actor.team is not None
            and actor.team == self._owner_team(record.tenant, record.api)
        )

    def _owner_team(self, tenant: str, api: str) -> str | None:
        for tool in self.catalog.tools():
            if tool.tenant == tenant and tool.api == api:
                return tool.owner
        return None

    def _served_api(self, actor: Principal, api: str) -> tuple[str, str]:
        tenant, _, name = api.partition(":")
        served = any(tool.tenant == tenant and tool.api == name for tool in self.catalog.tools())
        if not name or not served or not in_reach(actor, tenant):
            raise InvalidRequest(f"no API {api!r} is served to you (give it as tenant:api)")
        return tenant, name

    async def _changed(self, actor: Principal, kind: EventKind, record: SubscriptionRecord) -> None:
        await self.refresh()
        if self.on_change is not None:
            await self.on_change(record.id)
        if self.audit is not None:
            details = {
                "subscription": record.id,
                "subscriber": record.subscriber,
                "api": record.api,
                "state": record.state,
            }
            await self.audit.append(AuditEvent.by(actor, kind, tenant=record.tenant, details=details))


def _administers(actor: Principal, tenant: str) -> bool:
    if actor.kind is PrincipalKind.SYSTEM:
        return True
    return persona_of(actor.persona) is Persona.ADMIN and in_reach(actor, tenant)


def _subscriber_key(text: str) -> str:
    """A subscriber as a principal key (`user:bob`): a bare `bob` would never match a caller."""
    try:
        kind, ident = parse_principal_key(text)
    except ValueError as exc:
        raise InvalidRequest(f"subscriber: {exc}") from None
    return f"{kind.value}:{ident}"
