"""Co-occurrence learned from sessions: counts, persistence, the call hook, and its effect on ranking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colonnade.routing.learning import CallFeedback, CallTrails, CoOccurrence, LearningFileError
from colonnade.routing.router import Router
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


def test_counts_survive_a_save_and_load(tmp_path: Path) -> None:
    learned = CoOccurrence()
    learned.observe([GET, INVOICE])
    assert learned.dirty
    path = tmp_path / "routing" / "co_occurrence.json"
    learned.save(path)
    assert not learned.dirty
    loaded = CoOccurrence.load(path)
    assert loaded.affinity(GET, INVOICE) == learned.affinity(GET, INVOICE) == 0.5
    assert len(loaded) == 2
    assert CoOccurrence.load(tmp_path / "missing.json").affinity(GET, INVOICE) == 0.0


def test_a_damaged_file_is_reported_with_its_path_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "co_occurrence.json"
    path.write_text("{not json")
    with pytest.raises(LearningFileError, match=r"co_occurrence\.json.*delete it"):
        CoOccurrence.load(path)
    path.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(LearningFileError, match="not a co-occurrence file"):
        CoOccurrence.load(path)
    feedback = CallFeedback.open(path)  # the gateway starts afresh instead of failing
    assert len(feedback.learned) == 0


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


def test_the_call_hook_learns_per_session_and_saves_periodically(tmp_path: Path) -> None:
    path = tmp_path / "co_occurrence.json"
    feedback = CallFeedback(CoOccurrence(), path=path, save_every=2)
    feedback.after_success("session-1", GET)
    feedback.after_success(None, EMAIL)  # a stateless call has no session to learn pairs from
    assert not path.exists()
    feedback.after_success("session-1", INVOICE)
    assert path.exists()
    assert CoOccurrence.load(path).affinity(GET, INVOICE) == 0.5
    assert feedback.session_tools("session-1") == (GET, INVOICE)
    assert feedback.session_tools(None) == ()
    feedback.after_success("session-2", EMAIL)
    feedback.flush()
    assert CoOccurrence.load(path).affinity(EMAIL, GET) == 0.0
    assert len(CoOccurrence.load(path)) == 3


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
