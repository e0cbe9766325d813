"""The governance stores on SQLite and PostgreSQL: API keys, agents, subscriptions, DPoP replays,
through the services that use them (so the rules and the storage are tested together)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest
from joserfc.jwk import ECKey
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.catalog.catalog import Catalog
from colonnade.governance.agent_admin import AgentAdmin, AgentRequest
from colonnade.governance.identity.api_keys import ApiKeys
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.key_admin import KeyAdmin, KeyRequest
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import InvalidRequest, UnknownResource
from colonnade.governance.subscriptions import SubscriptionAdmin, SubscriptionBook
from colonnade.store.agents_repo import AgentStore
from colonnade.store.api_keys_repo import ApiKeyStore
from colonnade.store.dpop_replay_repo import DpopReplayStore
from colonnade.store.subscriptions_repo import SubscriptionStore
from tests.support.tenant_contracts import tenant_contract

OPERATOR = Principal.system("test")


async def test_keys_rotate_with_an_overlap_and_revoke(engine: AsyncEngine) -> None:
    store = ApiKeyStore(engine)
    keys = ApiKeys(store, cache_s=0)
    admin = KeyAdmin(store, overlap_s=0)
    issued = await admin.create(OPERATOR, KeyRequest(owner="bot", persona="consumer", tenant="acme"))
    principal = await keys.authenticate(issued.token)
    assert isinstance(principal, Principal) and principal.id == "bot" and principal.tenant == "acme"
    assert principal.credential == f"api_key:{issued.record.id}"
    rotated = await admin.rotate(OPERATOR, issued.record.id)
    old = await keys.authenticate(issued.token)
    assert isinstance(old, AuthFailure) and old.code == "A-AUTH-EXPIRED"  # no overlap configured
    assert isinstance(await keys.authenticate(rotated.token), Principal)
    await admin.revoke(OPERATOR, rotated.record.id)
    revoked = await keys.authenticate(rotated.token)
    assert isinstance(revoked, AuthFailure) and revoked.code == "A-AUTH-REVOKED"
    with pytest.raises(InvalidRequest):
        await admin.rotate(OPERATOR, rotated.record.id)
    wrong_secret = issued.token[:-4] + "abcd"
    unknown = await keys.authenticate(wrong_secret)
    assert isinstance(unknown, AuthFailure) and unknown.code == "A-AUTH-API-KEY"


async def test_keys_stay_within_their_tenant(engine: AsyncEngine) -> None:
    admin = KeyAdmin(ApiKeyStore(engine))
    globex = await admin.create(OPERATOR, KeyRequest(owner="g", persona="admin", tenant="globex"))
    acme_security = Principal(
        Principal.local().kind, "sec", tenant="acme", persona="security",
        scopes=frozenset({"colonnade:security:read", "colonnade:security:write"}),
    )  # fmt: skip
    assert [key.id for key in await admin.list(acme_security)] == []
    with pytest.raises(UnknownResource):
        await admin.revoke(acme_security, globex.record.id)


async def test_agents_register_once_and_revoke(engine: AsyncEngine) -> None:
    changed: list[int] = []

    async def on_change() -> None:
        changed.append(1)

    admin = AgentAdmin(AgentStore(engine), on_change=on_change)
    key = ECKey.generate_key("P-256", auto_kid=True)
    request = AgentRequest(("acme:crm:*",), "bot-1", "acme", public_key=dict(key.as_dict(private=False)))
    agent = await admin.register(OPERATOR, request)
    assert agent.key_thumbprint == key.thumbprint() and agent.allowed_tools == ("acme:crm:*",)
    with pytest.raises(InvalidRequest):
        await admin.register(OPERATOR, request)
    revoked = await admin.revoke(OPERATOR, "bot-1")
    assert revoked.revoked_at is not None and len(changed) == 2
    assert [a.id for a in await admin.list(OPERATOR)] == ["bot-1"]


async def test_subscriptions_move_through_their_states(engine: AsyncEngine) -> None:
    catalog = Catalog()
    catalog.publish(tenant_contract("acme", "items", "http://127.0.0.1:9"))
    book = SubscriptionBook()
    admin = SubscriptionAdmin(SubscriptionStore(engine), catalog, book, approval=["acme:*"])
    pending = await admin.request(OPERATOR, "acme:items", "user:bob")
    assert pending.state == "pending" and not book.active("user:bob", "acme", "items")
    await admin.approve(OPERATOR, pending.id)
    assert book.active("user:bob", "acme", "items")
    with pytest.raises(InvalidRequest):
        await admin.approve(OPERATOR, pending.id)
    await admin.revoke(OPERATOR, pending.id)
    assert not book.active("user:bob", "acme", "items")
    fresh = SubscriptionBook()
    await SubscriptionAdmin(SubscriptionStore(engine), catalog, fresh).refresh()
    assert not fresh.active("user:bob", "acme", "items")


async def test_a_dpop_proof_is_accepted_once_across_replicas(
    engine: AsyncEngine, sibling_engine: Callable[[], Awaitable[AsyncEngine]]
) -> None:
    replicas = [DpopReplayStore(engine), DpopReplayStore(await sibling_engine())]
    until = datetime.now(UTC) + timedelta(minutes=2)
    firsts = await asyncio.gather(*(replica.first_use("proof-1", until) for replica in replicas * 3))
    assert sorted(firsts) == [False] * 5 + [True]
    await replicas[0].first_use("proof-old", datetime.now(UTC) - timedelta(seconds=1))
    assert await replicas[1].purge_expired() == 1
