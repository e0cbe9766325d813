"""The cache of checked API keys on SQLite and PostgreSQL: one database read per key per bound, a
revocation on another replica applies within the bound, on the revoking replica at once.

Two `ApiKeys` on two engines of one database play two replicas; their clock is a test clock, so
the bound is shown by moving it, never by waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.governance.identity.api_keys import ApiKeys
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.key_admin import KeyAdmin, KeyRequest
from colonnade.governance.principal import Principal
from colonnade.store.api_keys_repo import ApiKeyRecord, ApiKeyStore

OPERATOR = Principal.system("test")
BOUND_S = 5.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingStore(ApiKeyStore):
    """The real store, counting reads; `hold` (when set) keeps a read from returning until released."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine)
        self.reads = 0
        self.hold: asyncio.Event | None = None
        self.read_done = asyncio.Event()

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        record = await super().get(key_id)
        self.reads += 1
        self.read_done.set()
        if self.hold is not None:
            await self.hold.wait()
        return record


def _code(outcome: Principal | AuthFailure) -> str:
    return outcome.code if isinstance(outcome, AuthFailure) else "ok"


async def test_a_checked_key_costs_one_read_per_bound(engine: AsyncEngine) -> None:
    store, clock = CountingStore(engine), Clock()
    keys = ApiKeys(store, cache_s=BOUND_S, clock=clock)
    issued = await KeyAdmin(store).create(OPERATOR, KeyRequest(owner="ci", persona="admin", tenant="acme"))
    for _ in range(50):
        assert _code(await keys.authenticate(issued.token)) == "ok"
    assert store.reads == 1
    clock.now += BOUND_S
    assert _code(await keys.authenticate(issued.token)) == "ok"
    assert store.reads == 2
    await keys.aclose()


async def test_a_revocation_elsewhere_applies_within_the_bound_and_here_at_once(
    engine: AsyncEngine, sibling_engine: Callable[[], Awaitable[AsyncEngine]]
) -> None:
    clock = Clock()
    here_store, there_store = ApiKeyStore(engine), ApiKeyStore(await sibling_engine())
    here = ApiKeys(here_store, cache_s=BOUND_S, clock=clock)
    there = ApiKeys(there_store, cache_s=BOUND_S, clock=clock)
    admin = KeyAdmin(here_store, on_change=here.forget)  # the revoking replica forgets the key
    issued = await admin.create(OPERATOR, KeyRequest(owner="ci", persona="admin", tenant="acme"))
    read_at = clock.now
    assert _code(await here.authenticate(issued.token)) == "ok"
    assert _code(await there.authenticate(issued.token)) == "ok"

    clock.now += 1.0
    revoked_at = clock.now
    await admin.revoke(OPERATOR, issued.record.id)
    assert _code(await here.authenticate(issued.token)) == "A-AUTH-REVOKED"  # at once
    clock.now = read_at + BOUND_S - 0.01
    assert _code(await there.authenticate(issued.token)) == "ok"  # remembered, within the bound
    clock.now = read_at + BOUND_S
    assert _code(await there.authenticate(issued.token)) == "A-AUTH-REVOKED"
    assert clock.now - revoked_at <= BOUND_S  # never granted past the bound after the revocation
    for step in range(1, 20):  # and never again afterwards
        clock.now += step * 0.7
        assert _code(await there.authenticate(issued.token)) == "A-AUTH-REVOKED"
    await here.aclose()
    await there.aclose()


async def test_a_read_in_flight_when_the_key_is_revoked_here_is_not_remembered(engine: AsyncEngine) -> None:
    store, clock = CountingStore(engine), Clock()
    keys = ApiKeys(store, cache_s=BOUND_S, clock=clock)
    admin = KeyAdmin(store, on_change=keys.forget)
    issued = await admin.create(OPERATOR, KeyRequest(owner="ci", persona="admin", tenant="acme"))
    gate = asyncio.Event()
    store.hold = gate
    in_flight = asyncio.create_task(keys.authenticate(issued.token))
    await store.read_done.wait()  # it read the key unrevoked, and has not answered yet
    store.hold = None
    await admin.revoke(OPERATOR, issued.record.id)
    assert not in_flight.done()
    gate.set()
    assert _code(await in_flight) == "ok"  # it began before the revocation
    assert _code(await keys.authenticate(issued.token)) == "A-AUTH-REVOKED"  # same instant: not cached
    await keys.aclose()
