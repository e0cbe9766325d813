"""Co-occurrence learned from sessions: counts, saving to the database, the call hook, and ranking."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.routing.learning import CallFeedback, CallTrails, CoOccurrence, CoOccurrenceCounts
from colonnade.routing.router import Router
from colonnade.store import CoOccurrenceStore, migrate_engine
from tests.support.tool_docs import BILLING, CRM, NOTIFY, sample_corpus

GET = f"{CRM}:get_customer"
INVOICE = f"{BILLING}:create_invoice"
EMAIL = f"{NOTIFY}:send_email"


def test_affinity_estimates_how_often_tools_share_a_session() -> None:
    learned = CoOccurrence()
    for _ in range(3):
        learned.observe([GET, INVOICE, GET, INVOICE])  # repeats within a session count once
    learned.observe([GET, EMAIL])
    assert learned.affinity(GET, INVOICE) == pytest.approx(3 / 5)  # 3 of 4 sessions, damped by one
    assert learned.affinity(INVOICE, GET) == pytest.approx(3 / 4)
    assert learned.affinity(GET, EMAIL) == pytest.approx(1 / 5)
    assert learned.affinity(EMAIL, INVOICE) == 0.0
    assert learned.affinity("never:seen:tool", GET) == 0.0
    assert [tool for tool, _ in learned.neighbours(GET)] == [INVOICE, EMAIL]
    assert [affinity for _, affinity in learned.neighbours(GET)] == pytest.approx([0.6, 0.2])


def test_only_the_recent_window_of_a_session_pairs_up() -> None:
    learned = CoOccurrence(window=2)
    learned.observe(["t:a:one", "t:a:two", "t:a:three", "t:a:four"])
    assert learned.affinity("t:a:four", "t:a:three") > 0
    assert learned.affinity("t:a:four", "t:a:one") == 0.0
    with pytest.raises(ValueError, match="window"):
        CoOccurrence(window=0)


def test_unsaved_counts_are_handed_over_once_and_kept_when_the_save_fails() -> None:
    learned = CoOccurrence()
    learned.observe([GET, INVOICE])
    assert learned.has_unsaved
    delta = learned.take_unsaved()
    assert delta.uses == {GET: 1, INVOICE: 1}
    assert delta.pairs == {(GET, INVOICE): 1, (INVOICE, GET): 1}
    assert not learned.has_unsaved and not learned.take_unsaved()
    assert learned.affinity(GET, INVOICE) == 0.5  # the totals stay
    learned.observe([GET, EMAIL])
    learned.keep_unsaved(delta)  # its save failed: the next save carries it, with what came since
    assert learned.take_unsaved() == CoOccurrenceCounts(
        {GET: 2, INVOICE: 1, EMAIL: 1},
        {(GET, INVOICE): 1, (INVOICE, GET): 1, (GET, EMAIL): 1, (EMAIL, GET): 1},
    )


def test_adopting_saved_totals_keeps_what_was_learned_since() -> None:
    learned = CoOccurrence()
    learned.observe([GET, EMAIL])
    learned.adopt(CoOccurrenceCounts({GET: 3, INVOICE: 3}, {(GET, INVOICE): 3, (INVOICE, GET): 3}))
    assert learned.affinity(GET, INVOICE) == pytest.approx(3 / 5)  # 3 of 4 sessions, damped by one
    assert learned.affinity(GET, EMAIL) == pytest.approx(1 / 5)
    assert len(learned) == 3
    assert learned.take_unsaved().uses == {GET: 1, EMAIL: 1}  # only the local sighting is unsaved


def test_trails_keep_recent_distinct_tools_of_recent_sessions() -> None:
    trails = CallTrails(max_sessions=2, length=3)
    assert trails.record("s1", "a") == ()
    trails.record("s1", "b")
    assert trails.record("s1", "a") == ("a", "b")
    trails.record("s1", "c")
    trails.record("s1", "d")
    assert trails.tools("s1") == ("a", "c", "d")
    trails.record("s2", "x")
    trails.record("s3", "y")
    assert trails.tools("s1") == ()  # the least recently active session was dropped
    assert trails.tools("s3") == ("y",)


async def test_the_call_hook_learns_per_session_and_saves_periodically(engine: AsyncEngine) -> None:
    store = CoOccurrenceStore(engine)
    feedback = CallFeedback(CoOccurrence(), repository=store, save_every=2)
    feedback.after_success("session-1", GET)
    feedback.after_success(None, EMAIL)  # a stateless call has no session to learn pairs from
    feedback.after_success("session-1", GET)  # a repeat teaches nothing new
    await asyncio.sleep(0.05)
    assert not await store.load()  # one call taught something: below save_every
    feedback.after_success("session-1", INVOICE)  # the second: saved in the background
    saved = await _saved(store, lambda counts: bool(counts))
    assert saved.uses == {GET: 1, INVOICE: 1}
    assert saved.pairs == {(GET, INVOICE): 1, (INVOICE, GET): 1}
    assert not feedback.learned.has_unsaved
    assert feedback.session_tools("session-1") == (GET, INVOICE)
    assert feedback.session_tools(None) == ()
    feedback.after_success("session-2", EMAIL)
    await feedback.aclose()  # shutdown saves what is left
    assert (await store.load()).uses == {GET: 1, INVOICE: 1, EMAIL: 1}


async def test_learning_resumes_from_the_database_after_a_restart(engine: AsyncEngine) -> None:
    first = CallFeedback(CoOccurrence(), repository=CoOccurrenceStore(engine))
    first.after_success("s-1", GET)
    first.after_success("s-1", INVOICE)
    await first.aclose()
    restarted = CallFeedback(CoOccurrence(), repository=CoOccurrenceStore(engine))
    await restarted.load()
    assert restarted.learned.affinity(GET, INVOICE) == 0.5
    restarted.after_success("s-2", GET)
    restarted.after_success("s-2", INVOICE)
    await restarted.aclose()
    assert (await CoOccurrenceStore(engine).load()).uses == {GET: 2, INVOICE: 2}  # added, not replaced


async def test_a_failed_save_is_logged_and_retried_with_the_next_one(
    empty_engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """A database without the tables refuses the save; nothing reaches the call, nothing is lost."""
    store = CoOccurrenceStore(empty_engine)
    feedback = CallFeedback(CoOccurrence(), repository=store, save_every=1)
    with caplog.at_level(logging.WARNING, logger="colonnade.routing.learning"):
        await feedback.load()
        feedback.after_success("s-1", GET)  # its background save fails
        await feedback.flush()
    assert "cannot load learned tool co-occurrence" in caplog.text
    assert "cannot save learned tool co-occurrence" in caplog.text
    assert feedback.learned.has_unsaved and feedback.learned.affinity(GET, INVOICE) == 0.0
    await migrate_engine(empty_engine)
    feedback.after_success("s-1", INVOICE)
    await feedback.aclose()
    assert (await store.load()).uses == {GET: 1, INVOICE: 1}


async def _saved(store: CoOccurrenceStore, ready: Callable[[CoOccurrenceCounts], bool]) -> CoOccurrenceCounts:
    """What the store holds once `ready` says so (a background save is awaited for up to 5 s)."""
    for _ in range(500):
        counts = await store.load()
        if ready(counts):
            return counts
        await asyncio.sleep(0.01)
    raise AssertionError(f"the background save did not arrive; the store holds {counts}")


def test_learned_co_occurrence_changes_the_ranking() -> None:
    corpus = sample_corpus()
    update = f"{CRM}:update_customer"
    plain = Router(corpus, top_k=5).route("customer phone")
    learned = CoOccurrence()
    for _ in range(4):
        learned.observe([update, EMAIL])
    informed = Router(corpus, top_k=5, learning=learned).route("customer phone")
    assert plain.selected[0] == informed.selected[0] == update
    assert EMAIL not in plain.selected
    assert informed.selected[-1] == EMAIL  # displaces the weakest text match
    assert informed.reasons[EMAIL] == [f"often used with {update} (+0.24)"]


async def test_counts_loaded_from_the_database_boost_the_ranking(engine: AsyncEngine) -> None:
    update = f"{CRM}:update_customer"
    learned = CoOccurrence()
    for _ in range(4):
        learned.observe([update, EMAIL])
    await CoOccurrenceStore(engine).add(learned.take_unsaved())
    feedback = CallFeedback(CoOccurrence(), repository=CoOccurrenceStore(engine))
    await feedback.load()
    informed = Router(sample_corpus(), top_k=5, learning=feedback.learned).route("customer phone")
    assert informed.selected[-1] == EMAIL
    assert informed.reasons[EMAIL] == [f"often used with {update} (+0.24)"]


def test_co_occurrence_follows_the_session_even_without_a_text_match() -> None:
    learned = CoOccurrence()
    for _ in range(4):
        learned.observe([f"{BILLING}:refund_invoice", EMAIL])
    router = Router(sample_corpus(), top_k=4, learning=learned)
    decision = router.route("refund a paid invoice", session_tools=[f"{BILLING}:refund_invoice"])
    assert EMAIL in decision.selected
    assert f"often used with {BILLING}:refund_invoice" in " ".join(decision.reasons[EMAIL])
    denied = router.route("refund a paid invoice", caller_allowed=lambda t: t != EMAIL)
    assert EMAIL not in denied.selected
