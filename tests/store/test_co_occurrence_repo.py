"""Learned tool co-occurrence in the database: counts are added, never overwritten, on both databases."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.routing.learning import CoOccurrenceCounts
from colonnade.store import CoOccurrenceStore

GET, INVOICE, EMAIL = "acme:crm:get_customer", "acme:billing:create_invoice", "acme:notify:send_email"


def pairs_of(*tools: str) -> dict[tuple[str, str], int]:
    """Every ordered pair of distinct `tools`, counted once."""
    return {(a, b): 1 for a in tools for b in tools if a != b}


async def test_an_empty_database_has_no_counts(engine: AsyncEngine) -> None:
    saved = await CoOccurrenceStore(engine).load()
    assert saved.uses == {} and saved.pairs == {}
    assert not saved


async def test_counts_are_added_to_what_is_saved(engine: AsyncEngine) -> None:
    store = CoOccurrenceStore(engine)
    await store.add(CoOccurrenceCounts({GET: 1, INVOICE: 1}, pairs_of(GET, INVOICE)))
    await store.add(CoOccurrenceCounts({GET: 2, EMAIL: 1}, {(GET, EMAIL): 1, (EMAIL, GET): 1}))
    await store.add(CoOccurrenceCounts())  # nothing learned: nothing written
    saved = await store.load()
    assert saved.uses == {GET: 3, INVOICE: 1, EMAIL: 1}
    assert saved.pairs == {**pairs_of(GET, INVOICE), (GET, EMAIL): 1, (EMAIL, GET): 1}


async def test_counts_survive_a_restart(
    engine: AsyncEngine, sibling_engine: Callable[[], Awaitable[AsyncEngine]]
) -> None:
    await CoOccurrenceStore(engine).add(CoOccurrenceCounts({GET: 4, INVOICE: 3}, pairs_of(GET, INVOICE)))
    await engine.dispose()
    restarted = CoOccurrenceStore(await sibling_engine())
    saved = await restarted.load()
    assert saved.uses == {GET: 4, INVOICE: 3}
    assert saved.pairs == pairs_of(GET, INVOICE)


async def test_replicas_adding_at_the_same_time_lose_no_count(
    engine: AsyncEngine, sibling_engine: Callable[[], Awaitable[AsyncEngine]]
) -> None:
    """Two replicas save overlapping deltas concurrently, new rows included: every count is kept."""
    replicas = [CoOccurrenceStore(engine), CoOccurrenceStore(await sibling_engine())]
    rounds = 15

    def delta(replica: int, round_: int) -> CoOccurrenceCounts:
        own = f"acme:replica{replica}:tool{round_}"  # a row only this replica creates
        fresh = f"acme:shared:tool{round_}"  # a row both replicas may create first
        return CoOccurrenceCounts(
            {GET: 1, own: 1, fresh: 2}, {**pairs_of(GET, INVOICE), (GET, fresh): 1, (fresh, GET): 1}
        )

    await asyncio.wait_for(
        asyncio.gather(*(replicas[r].add(delta(r, i)) for i in range(rounds) for r in (0, 1))), timeout=60
    )
    saved = await replicas[1].load()
    assert saved.uses[GET] == 2 * rounds
    assert all(saved.uses[f"acme:shared:tool{i}"] == 4 for i in range(rounds))
    assert all(saved.uses[f"acme:replica{r}:tool{i}"] == 1 for i in range(rounds) for r in (0, 1))
    assert saved.pairs[(GET, INVOICE)] == saved.pairs[(INVOICE, GET)] == 2 * rounds
    assert all(saved.pairs[(GET, f"acme:shared:tool{i}")] == 2 for i in range(rounds))
    assert len(saved.uses) == 1 + 3 * rounds
