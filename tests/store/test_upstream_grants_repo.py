"""The upstream grants repository (mode user_oauth), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.store.upstream_grants_repo import GrantRecord, UpstreamGrantStore


def grant(principal: str = "user:alice", provider: str = "crm", sealed: str = "v1.k.one") -> GrantRecord:
    now = datetime.now(UTC)
    return GrantRecord(principal, provider, "acme", "alice@crm", ("crm.read",), sealed, now, now)


async def test_a_grant_is_kept_replaced_and_listed_per_principal(engine: AsyncEngine) -> None:
    store = UpstreamGrantStore(engine)
    assert await store.get("user:alice", "crm") is None
    await store.put(grant())
    await store.put(grant(provider="tickets"))
    await store.put(grant("user:bob"))
    kept = await store.get("user:alice", "crm")
    assert kept is not None and kept.sealed_refresh_token == "v1.k.one" and kept.scopes == ("crm.read",)
    assert kept.created_at.tzinfo is not None
    await store.put(grant(sealed="v1.k.two"))  # connecting again replaces the earlier grant
    again = await store.get("user:alice", "crm")
    assert again is not None and again.sealed_refresh_token == "v1.k.two"
    assert [g.provider for g in await store.of_principal("user:alice")] == ["crm", "tickets"]


async def test_a_rotation_applies_only_over_the_token_it_replaces(engine: AsyncEngine) -> None:
    store = UpstreamGrantStore(engine)
    await store.put(grant())
    assert await store.rotate("user:alice", "crm", "v1.k.one", "v1.k.two")
    # a second replica that refreshed with the old token does not overwrite the newer one
    assert not await store.rotate("user:alice", "crm", "v1.k.one", "v1.k.stale")
    kept = await store.get("user:alice", "crm")
    assert kept is not None and kept.sealed_refresh_token == "v1.k.two"
    assert not await store.rotate("user:nobody", "crm", "v1.k.two", "v1.k.three")


async def test_removing_one_provider_or_every_grant_of_a_principal(engine: AsyncEngine) -> None:
    store = UpstreamGrantStore(engine)
    for provider in ("crm", "tickets", "wiki"):
        await store.put(grant(provider=provider))
    await store.put(grant("user:bob"))
    assert [g.provider for g in await store.remove("user:alice", "crm")] == ["crm"]
    assert sorted(g.provider for g in await store.remove("user:alice")) == ["tickets", "wiki"]
    assert await store.of_principal("user:alice") == []
    assert await store.remove("user:alice") == []
    assert [g.principal for g in await store.of_principal("user:bob")] == ["user:bob"]
