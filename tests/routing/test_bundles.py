"""Bundles: configured groups selected together, when named or when a member is selected strongly."""

from __future__ import annotations

import pytest

from colonnade.routing.bundles import Bundle, Bundles
from colonnade.routing.router import Router
from tests.support.tool_docs import BILLING, CRM, NOTIFY, sample_corpus

REFUND = f"{BILLING}:refund_invoice"
GET = f"{CRM}:get_customer"
EMAIL = f"{NOTIFY}:send_email"
CREATE = f"{CRM}:create_customer"

GROUPS = {"after-sales": [REFUND, GET, EMAIL], "onboarding": [CREATE, EMAIL]}


def router(**options: object) -> Router:
    return Router(sample_corpus(), top_k=3, bundles=Bundles.from_mapping(GROUPS), **options)  # type: ignore[arg-type]


def test_bundles_are_looked_up_by_member_and_by_name() -> None:
    bundles = Bundles.from_mapping({"onboarding": [CREATE, EMAIL, CREATE], "after-sales": [REFUND]})
    assert [b.name for b in bundles] == ["after-sales", "onboarding"]
    assert bundles.of(EMAIL)[0].tools == (CREATE, EMAIL)  # duplicates dropped, order kept
    assert bundles.of("acme:crm:nothing") == []
    assert [b.name for b in bundles.named_in(frozenset({"after", "sale", "please"}))] == ["after-sales"]
    assert bundles.named_in(frozenset({"sales"})) == []
    with pytest.raises(ValueError, match="lists no tools"):
        Bundle("empty", ())


def test_a_strongly_selected_member_brings_its_bundle() -> None:
    decision = router().route("refund a paid invoice")
    assert decision.selected[:3] == [REFUND, GET, EMAIL]
    assert decision.reasons[GET] == [f"bundle 'after-sales' with {REFUND}"]
    assert decision.reasons[EMAIL] == [f"bundle 'after-sales' with {REFUND}"]
    # bundle members come on top of the k ranked tools
    assert len(decision.selected) == 3 + 2


def test_a_weakly_selected_member_does_not() -> None:
    decision = router().route("record a payment for an invoice")
    assert REFUND in decision.selected  # selected, but far below the best match
    assert GET not in decision.selected and EMAIL not in decision.selected


def test_naming_a_bundle_selects_it_first() -> None:
    decision = router().route("start the onboarding for Ada")
    assert decision.selected[:2] == [CREATE, EMAIL]
    assert decision.reasons[CREATE][0] == "bundle 'onboarding' named in the query"


def test_bundles_never_add_tools_the_caller_may_not_call() -> None:
    decision = router().route("refund a paid invoice", caller_allowed=lambda t: t != EMAIL)
    assert REFUND in decision.selected and GET in decision.selected
    assert EMAIL not in decision.selected
