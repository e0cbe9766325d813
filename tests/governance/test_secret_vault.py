"""Stored secrets on SQLite and PostgreSQL: sealed at rest (the plaintext is in no byte of the SQLite
file nor in any PostgreSQL row), per-tenant scope, rotation overlap on an injected clock, audit
records that name versions and never values, and re-sealing after the key ring rotates."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.governance.audit import AuditLog, EventKind
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import Forbidden, InvalidRequest, UnknownResource
from colonnade.governance.secrets import SecretAdmin, Secrets, SecretVault
from colonnade.store.audit_repo import AuditFilter, AuditStore
from colonnade.store.sealing import Sealer, SealError
from colonnade.store.secrets_repo import SecretVersionStore

OPERATOR = Principal.system("cli")
FIRST = "crm-first-9c1f3e7a5b"
SECOND = "crm-second-4d2a8b6c0e"
GLOBEX = "globex-only-7e5f1a9d3c"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def audit(engine: AsyncEngine) -> AuditLog:
    return AuditLog(AuditStore(engine), b"k" * 32)


@pytest.fixture
def admin(engine: AsyncEngine, clock: Clock, audit: AuditLog) -> SecretAdmin:
    vault = SecretVault(SecretVersionStore(engine), Sealer.generate(), cache_s=0, clock=clock)
    return SecretAdmin(vault.store, vault, audit, overlap_s=3600)


async def _rows(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as connection:
        result = await connection.execute(text("SELECT * FROM secret_versions"))
        return [json.dumps([str(value) for value in row]) for row in result]


async def test_a_stored_secret_is_sealed_at_rest(engine: AsyncEngine, admin: SecretAdmin) -> None:
    await admin.set(OPERATOR, "crm-token", FIRST, tenant="acme")
    await admin.rotate(OPERATOR, "crm-token", SECOND, tenant="acme")
    assert await admin.vault.resolve("crm-token", tenant="acme") == SECOND
    rows = await _rows(engine)
    assert len(rows) == 2
    assert not any(FIRST in row or SECOND in row for row in rows)
    if engine.dialect.name == "sqlite":
        await engine.dispose()  # everything on disk, then read the file's bytes (and its WAL)
        database = Path(str(engine.url.database))
        files = [path for path in database.parent.iterdir() if path.name.startswith(database.name)]
        everything = b"".join(path.read_bytes() for path in files)
        assert b"crm-token" in everything  # the name is there: the search does look in the right file
        assert FIRST.encode() not in everything and SECOND.encode() not in everything


async def test_a_tenants_secret_is_never_given_to_another_tenant(admin: SecretAdmin) -> None:
    await admin.set(OPERATOR, "crm-token", FIRST, tenant="acme")
    await admin.set(OPERATOR, "only-globex", GLOBEX, tenant="globex")
    vault = admin.vault
    assert await vault.resolve("crm-token", tenant="acme") == FIRST
    assert await vault.resolve("crm-token", tenant="globex") is None
    assert await vault.resolve("crm-token", tenant=None) is None  # the gateway's own scope is another
    assert await vault.resolve("only-globex", tenant="acme") is None
    resolver = Secrets({"store": vault})
    assert await resolver.resolve("store:crm-token", tenant="globex") is None
    assert "--tenant globex" in resolver.how_to_set("store:crm-token", tenant="globex")


async def test_the_gateways_own_secret_serves_every_tenant_unless_the_tenant_has_its_own(
    admin: SecretAdmin,
) -> None:
    await admin.set(OPERATOR, "shared", FIRST)
    await admin.set(OPERATOR, "shared", SECOND, tenant="acme")
    assert await admin.vault.resolve("shared", tenant="globex") == FIRST
    assert await admin.vault.resolve("shared", tenant="acme") == SECOND


async def test_a_sealed_value_moved_to_another_tenant_does_not_open(
    engine: AsyncEngine, admin: SecretAdmin
) -> None:
    await admin.set(OPERATOR, "crm-token", FIRST, tenant="acme")
    await admin.set(OPERATOR, "crm-token", SECOND, tenant="globex")
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "UPDATE secret_versions SET sealed = "
                "(SELECT sealed FROM secret_versions WHERE tenant = 'acme') WHERE tenant = 'globex'"
            )
        )
    with pytest.raises(SealError, match="does not open here"):
        await admin.vault.resolve("crm-token", tenant="globex")


async def test_rotation_keeps_the_previous_value_verifying_until_the_overlap_ends(
    admin: SecretAdmin, clock: Clock
) -> None:
    vault = admin.vault
    await admin.set(OPERATOR, "webhook", FIRST, tenant="acme")
    await admin.rotate(OPERATOR, "webhook", SECOND, tenant="acme", overlap_s=600)
    assert await vault.resolve("webhook", tenant="acme") == SECOND  # upstream calls send the new one
    assert await vault.accepts("webhook", FIRST, tenant="acme")
    assert await vault.accepts("webhook", SECOND, tenant="acme")
    clock.advance(599)
    assert await vault.accepts("webhook", FIRST, tenant="acme")
    clock.advance(1)
    assert not await vault.accepts("webhook", FIRST, tenant="acme")
    assert await vault.accepts("webhook", SECOND, tenant="acme")
    assert not await vault.accepts("webhook", "anything-else", tenant="acme")
    listed = await admin.list(OPERATOR, "acme")
    assert [(view.version, view.current) for view in listed] == [(2, True), (1, False)]


async def test_set_replaces_at_once_and_a_later_change_purges_ended_versions(
    admin: SecretAdmin, clock: Clock
) -> None:
    vault = admin.vault
    await admin.set(OPERATOR, "webhook", FIRST, tenant="acme")
    await admin.set(OPERATOR, "webhook", SECOND, tenant="acme")  # a leaked value: no overlap
    assert not await vault.accepts("webhook", FIRST, tenant="acme")
    clock.advance(1)
    await admin.rotate(OPERATOR, "webhook", GLOBEX, tenant="acme", overlap_s=60)
    assert [view.version for view in await admin.list(OPERATOR, "acme")] == [3, 2]


async def test_every_change_is_audited_by_name_and_version_never_value(
    admin: SecretAdmin, audit: AuditLog
) -> None:
    await admin.set(OPERATOR, "crm-token", FIRST, tenant="acme")
    await admin.rotate(OPERATOR, "crm-token", SECOND, tenant="acme", overlap_s=60)
    await admin.delete(OPERATOR, "crm-token", tenant="acme")
    records = sorted(await audit.store.query(AuditFilter()), key=lambda record: record.seq)
    kinds = [record.kind for record in records]
    assert kinds == [EventKind.SECRET_SET, EventKind.SECRET_ROTATE, EventKind.SECRET_DELETE]
    assert all(record.tenant == "acme" and record.actor == "system:cli" for record in records)
    assert records[0].details["version"] == 1
    assert records[1].details["version"] == 2 and records[1].details["previous_version"] == 1
    assert records[2].details["versions"] == [2, 1]
    dumped = json.dumps([record.details for record in records])
    assert FIRST not in dumped and SECOND not in dumped
    assert await admin.vault.resolve("crm-token", tenant="acme") is None


async def test_refusals_say_what_is_wrong(admin: SecretAdmin) -> None:
    with pytest.raises(UnknownResource, match="set it first"):
        await admin.rotate(OPERATOR, "never-set", FIRST)
    with pytest.raises(InvalidRequest, match="not a secret name"):
        await admin.set(OPERATOR, "bad name!", FIRST)
    with pytest.raises(InvalidRequest, match="empty"):
        await admin.set(OPERATOR, "crm-token", "  \n")
    with pytest.raises(UnknownResource):
        await admin.delete(OPERATOR, "never-set")
    acme_admin = Principal.local("alice", tenant="acme", persona="admin")
    with pytest.raises(Forbidden, match="globex"):
        await admin.set(acme_admin, "crm-token", FIRST, tenant="globex")
    consumer = Principal.local("bob", tenant="acme", persona="consumer")
    with pytest.raises(Forbidden, match="security"):
        await admin.set(consumer, "crm-token", FIRST, tenant="acme")


async def test_a_rotated_key_ring_reseals_every_version_and_keeps_the_values(
    engine: AsyncEngine, admin: SecretAdmin
) -> None:
    await admin.set(OPERATOR, "crm-token", FIRST, tenant="acme")
    await admin.rotate(OPERATOR, "crm-token", SECOND, tenant="acme", overlap_s=60)
    old = admin.sealer
    new = old.rotated()
    assert await admin.reseal(OPERATOR, new) == 2
    assert {view.key_id for view in await admin.list(OPERATOR)} == {new.current}
    only_new = Sealer({new.current: new.keys[new.current]}, new.current)
    fresh = SecretVault(SecretVersionStore(engine), only_new, clock=admin.vault.clock)
    assert await fresh.resolve("crm-token", tenant="acme") == SECOND  # opens without the old key
    assert set(await fresh.accepted("crm-token", tenant="acme")) == {FIRST, SECOND}
