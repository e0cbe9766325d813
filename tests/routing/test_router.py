"""The router over a real index of a small hand-written catalog: reasons, caller filtering,
the per-API cap, domain and session boosts, confidence and fallback, the trace event."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colonnade.config import RoutingSettings
from colonnade.routing import FusionWeights, IndexConfig
from colonnade.routing.bundles import Bundles
from colonnade.routing.context import ConversationTurn, Message
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.documents import ToolDoc
from colonnade.routing.router import Boosts, Router
from tests.support.tool_docs import BILLING, CRM, NOTIFY, sample_docs

ALL_IDS = sorted(doc.id for doc in sample_docs())
# Retrieval on words alone (no dense or domain signal), so scores here follow from the text.
WORDS = IndexConfig(dense=False, fusion=FusionWeights(query=1.0, clause=2.0))


@pytest.fixture(scope="module")
def corpus() -> ToolCorpus:
    """The sample catalog on words alone: these tests are about re-ranking and selection."""
    return ToolCorpus.from_docs(sample_docs(), WORDS)


def server_of(tool_id: str) -> str:
    return tool_id.rsplit(":", 1)[0]


def test_decision_lists_tools_best_first_with_scores_and_reasons(corpus: ToolCorpus) -> None:
    decision = Router(corpus).route("refund a paid invoice")
    assert decision.selected[0] == f"{BILLING}:refund_invoice"
    assert set(decision.scores) == set(decision.reasons) == set(decision.selected)
    scores = [decision.scores[t] for t in decision.selected]
    assert scores == sorted(scores, reverse=True)
    top_reasons = decision.reasons[f"{BILLING}:refund_invoice"]
    assert top_reasons[0].startswith("retrieval 1.00")
    assert "refund" in top_reasons[0] and "invoice" in top_reasons[0]
    assert decision.query_used == "refund a paid invoice"
    assert 0.0 <= decision.confidence <= 1.0 and not decision.fallback_used


def test_decision_is_json_serialisable_and_frozen(corpus: ToolCorpus) -> None:
    decision = Router(corpus).route("send a text message")
    encoded = json.loads(json.dumps(decision.to_json()))
    assert encoded == json.loads(json.dumps(asdict(decision)))
    assert encoded["selected"][0] == f"{NOTIFY}:send_sms"
    with pytest.raises(AttributeError):
        decision.confidence = 0.5  # type: ignore[misc]


def test_k_limits_the_selection(corpus: ToolCorpus) -> None:
    router = Router(corpus, top_k=8)
    assert len(router.route("customer invoice payment email", k=2).selected) == 2
    assert len(router.route("customer invoice payment email").selected) <= 8
    with pytest.raises(ValueError, match="k must be at least 1"):
        router.route("customer", k=0)


def test_only_tools_the_caller_may_call_are_candidates(corpus: ToolCorpus) -> None:
    router = Router(corpus)
    allowed = {f"{CRM}:get_customer", f"{BILLING}:list_invoices"}
    decision = router.route("refund a paid invoice of a customer", caller_allowed=allowed)
    assert decision.selected and set(decision.selected) <= allowed
    by_predicate = router.route("refund a paid invoice", caller_allowed=lambda t: t.startswith(CRM))
    assert all(t.startswith(CRM) for t in by_predicate.selected)
    assert f"{BILLING}:refund_invoice" not in by_predicate.selected


@settings(max_examples=40, deadline=None)
@given(
    allowed=st.sets(st.sampled_from(ALL_IDS)),
    query=st.sampled_from(["refund invoice", "customer email", "send message", "delete customer record"]),
    session=st.lists(st.sampled_from(ALL_IDS), max_size=3),
)
def test_no_boost_ever_brings_in_a_disallowed_tool(allowed: set[str], query: str, session: list[str]) -> None:
    router = Router(
        ToolCorpus.from_docs(sample_docs(), WORDS),
        fallback=[f"{NOTIFY}:send_email", f"{CRM}:search_customers"],
        confidence_threshold=0.5,
        bundles=Bundles.from_mapping({"refunds": [f"{BILLING}:refund_invoice", f"{NOTIFY}:send_email"]}),
    )
    decision = router.route(query, caller_allowed=allowed, session_tools=session, domain_hints=["billing"])
    assert set(decision.selected) <= allowed


def test_at_most_n_tools_per_api(corpus: ToolCorpus) -> None:
    decision = Router(corpus, per_server_cap=3).route("update the customer email address")
    crm = [t for t in decision.selected if server_of(t) == CRM]
    assert len(crm) == 3
    assert f"{CRM}:get_customer" not in decision.selected  # a weaker CRM match, held back by the cap
    assert any(server_of(t) == BILLING for t in decision.selected)  # ... so other APIs get a place
    assert len(Router(corpus, per_server_cap=2).route("update the customer email address").selected) < len(
        decision.selected
    )


def test_cap_does_not_apply_when_the_query_names_the_api(corpus: ToolCorpus) -> None:
    decision = Router(corpus, per_server_cap=3).route("merge or update customer records in the crm")
    crm = [t for t in decision.selected if server_of(t) == CRM]
    assert len(crm) == 6


def test_an_api_detected_in_the_request_may_lift_the_cap() -> None:
    domains = ToolCorpus.from_docs(sample_docs(), IndexConfig(dense=False, fusion=FusionWeights(domain=0.5)))
    request = "update the customer email address"
    capped = Router(domains, per_server_cap=3).route(request)
    assert len([t for t in capped.selected if server_of(t) == CRM]) == 3
    lifted = Router(domains, per_server_cap=3, boosts=Boosts(detected=1.0)).route(request)
    crm = [t for t in lifted.selected if server_of(t) == CRM]
    assert len(crm) > 3
    assert any(f"about API {CRM}" in r for t in crm for r in lifted.reasons[t])


def test_strong_matches_are_not_held_back_by_the_cap(corpus: ToolCorpus) -> None:
    """Tools scoring close to the best one are what the query asks for, whatever the API."""
    decision = Router(corpus, per_server_cap=1).route("send a message")
    assert decision.selected == [f"{NOTIFY}:send_email", f"{NOTIFY}:send_sms"]


def test_domain_hints_favour_an_api(corpus: ToolCorpus) -> None:
    router = Router(corpus, top_k=3)
    plain = router.route("customer phone")
    hinted = router.route("customer phone", domain_hints=["billing"])
    assert not any(server_of(t) == BILLING for t in plain.selected)
    assert hinted.selected[:2] == plain.selected[:2]  # a hint re-ranks; it does not override a clear match
    assert server_of(hinted.selected[2]) == BILLING
    assert any("domain hint 'billing'" in r for r in hinted.reasons[hinted.selected[2]])


def test_tools_used_earlier_in_the_session_are_boosted(corpus: ToolCorpus) -> None:
    router = Router(corpus, top_k=4)
    used = f"{CRM}:update_customer"
    before = router.route("send the customer an email")
    after = router.route("send the customer an email", session_tools=[used])
    assert used not in before.selected
    assert used in after.selected
    assert any("used earlier in this session" in r for r in after.reasons[used])


def test_messages_become_the_query(corpus: ToolCorpus) -> None:
    messages: list[ConversationTurn] = [
        Message("system", "You are a helpful assistant for ACME."),
        {"role": "user", "content": "I need to bill Ada for last month."},
        {"role": "assistant", "content": [{"type": "text", "text": "Sure, which items?"}]},
        {"role": "user", "content": "Actually, refund her last paid invoice instead."},
        {"role": "tool", "content": "{'ok': true}"},
    ]
    decision = Router(corpus).route(messages)
    assert decision.selected[0] == f"{BILLING}:refund_invoice"
    lines = decision.query_used.splitlines()
    assert lines[:2] == ["Actually, refund her last paid invoice instead."] * 2
    assert "ACME" not in decision.query_used and "'ok'" not in decision.query_used


def vague_corpus() -> ToolCorpus:
    """Forty tools that all export data; each names its own dataset."""
    fruit = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "kiwi", "lemon"]
    docs = [
        ToolDoc(
            id=f"acme:data{i % 4}:export_{f}_{i}",
            name=f"export_{f}_{i}",
            summary=f"Export data of the {f} set",
        )
        for i, f in enumerate(fruit * 4)
    ]
    return ToolCorpus.from_docs([*docs, *sample_docs()], WORDS)


def test_confidence_is_low_for_vague_queries_and_zero_without_matches() -> None:
    router = Router(vague_corpus(), top_k=5)
    vague = router.route("export data")
    specific = router.route("refund a paid invoice")
    assert specific.confidence > 0.8
    assert vague.confidence < 0.2 < specific.confidence
    nothing = router.route("xyzzy plugh")
    assert nothing.confidence == 0.0 and nothing.selected == []


@pytest.mark.parametrize("query", ["export data", "refund a paid invoice", "send an email", "xyzzy plugh"])
def test_confidence_of_a_query_does_not_change_with_k(query: str) -> None:
    """`colonnade tools search QUERY --k 3` and `--k 10` are equally sure of the same query."""
    router = Router(vague_corpus(), top_k=5)
    confidences = {k: router.route(query, k=k).confidence for k in (1, 2, 3, 5, 8, 10, 20, 50)}
    assert len(set(confidences.values())) == 1, confidences


def test_below_the_threshold_the_fallback_set_is_served_and_said(corpus: ToolCorpus) -> None:
    fallback = [f"{CRM}:search_customers", f"{NOTIFY}:send_email", "acme:gone:not_in_catalog"]
    router = Router(vague_corpus(), top_k=5, confidence_threshold=0.3, fallback=fallback)
    decision = router.route("export data")
    assert decision.fallback_used is True
    assert decision.selected == fallback[:2]  # unknown tools are never served
    assert all("fallback" in r[0] and "threshold" in r[0] for r in decision.reasons.values())
    confident = router.route("refund a paid invoice")
    assert confident.fallback_used is False and confident.selected[0] == f"{BILLING}:refund_invoice"
    limited = router.route("export data", caller_allowed={f"{NOTIFY}:send_email"})
    assert limited.selected == [f"{NOTIFY}:send_email"]


def test_without_a_fallback_set_a_vague_query_keeps_its_selection() -> None:
    decision = Router(vague_corpus(), top_k=5, confidence_threshold=0.9).route("export data")
    assert decision.fallback_used is False and len(decision.selected) == 5


def test_from_settings_applies_the_routing_section(corpus: ToolCorpus) -> None:
    settings = RoutingSettings(
        top_k=2, per_server_cap=1, bundles={"sms": [f"{NOTIFY}:send_sms", f"{CRM}:get_customer"]}
    )
    router = Router.from_settings(settings, corpus)
    assert router.top_k == 2 and router.per_server_cap == 1 and len(router.bundles) == 1


def test_every_decision_is_one_structured_trace_event(
    corpus: ToolCorpus, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="colonnade.routing"):
        decision = Router(corpus).route("refund a paid invoice", k=3)
    records = [r for r in caplog.records if r.name == "colonnade.routing"]
    assert len(records) == 1
    event = records[0].__dict__
    assert event["event"] == "routing.decision"
    assert event["query"] == "refund a paid invoice" and event["k"] == 3
    assert event["selected"] == decision.selected and event["reasons"] == decision.reasons
    assert event["candidates"][0] == {"id": f"{BILLING}:refund_invoice", "retrieval": 1.0, "score": 1.0}
    assert event["confidence"] == decision.confidence and event["fallback_used"] is False
    assert event["duration_ms"] >= 0
