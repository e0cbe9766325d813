"""Subscriptions end to end: a consumer calls an API only while subscribed; an API that needs
approval waits for its product owner; ending a subscription ends the access; all audited."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from colonnade.store.audit_repo import AuditFilter
from tests.support.governed import Governed, governed_gateway


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("subs"), subscription_approval=["acme:lab"]) as running:
        yield running


def _subscribe(governed: Governed, token: str, api: str) -> tuple[int, dict[str, object]]:
    with governed.rest(token) as client:
        response = client.post("/v1/subscriptions", json={"api": api})
    return response.status_code, response.json()


def _code(result: dict[str, object]) -> str:
    error = result.get("error")
    return (
        "ok"
        if result.get("status") == "success"
        else str(error["code"] if isinstance(error, dict) else error)
    )


def test_a_consumer_calls_an_api_only_while_subscribed(governed: Governed) -> None:
    bob = governed.token("consumer", sub="bob")
    hits = len(governed.backend_hits())
    assert (
        _code(governed.call(bob, "acme:items:read_item", item_id="I-1")[1]) == "A-AUTH-SUBSCRIPTION-REQUIRED"
    )
    assert len(governed.backend_hits()) == hits
    status, answer = _subscribe(governed, bob, "acme:items")
    subscription = answer["subscription"]
    assert status == 201 and isinstance(subscription, dict) and subscription["state"] == "active"
    assert (
        _subscribe(governed, bob, "acme:items")[1]["subscription"] == subscription
    )  # asking twice: same one
    assert _code(governed.call(bob, "acme:items:read_item", item_id="I-1")[1]) == "ok"
    assert _code(governed.call(bob, "acme:items:write_item", item_id="I-1", value="bob")[1]) == "ok"
    assert _code(governed.call(bob, "acme:lab:read_item", item_id="I-1")[1]) == "A-AUTH-SUBSCRIPTION-REQUIRED"
    carol = governed.token("consumer", sub="carol")  # another consumer is not covered by bob's subscription
    assert (
        _code(governed.call(carol, "acme:items:read_item", item_id="I-1")[1])
        == "A-AUTH-SUBSCRIPTION-REQUIRED"
    )
    with governed.rest(bob) as client:
        ended = client.delete(f"/v1/subscriptions/{subscription['id']}")
        assert ended.status_code == 200 and ended.json()["subscription"]["state"] == "revoked"
    assert (
        _code(governed.call(bob, "acme:items:read_item", item_id="I-1")[1]) == "A-AUTH-SUBSCRIPTION-REQUIRED"
    )


def test_an_api_needing_approval_waits_for_its_product_owner(governed: Governed) -> None:
    dana = governed.token("consumer", sub="dana")
    status, answer = _subscribe(governed, dana, "acme:lab")
    subscription = answer["subscription"]
    assert status == 201 and isinstance(subscription, dict) and subscription["state"] == "pending"
    assert (
        _code(governed.call(dana, "acme:lab:read_item", item_id="I-1")[1]) == "A-AUTH-SUBSCRIPTION-REQUIRED"
    )
    path = f"/v1/subscriptions/{subscription['id']}/approve"
    for stranger in (
        dana,  # a consumer cannot approve her own request
        governed.token("product_owner", team="team-b", sub="po-b"),  # another team's product owner
        governed.token("admin", tenant="globex", sub="g-admin"),  # another tenant's admin
    ):
        with governed.rest(stranger) as client:
            refused = client.post(path)
        assert refused.status_code in (403, 404), refused.text
    with governed.rest(governed.token("product_owner", team="team-a", sub="po-a")) as client:
        listed = client.get("/v1/subscriptions").json()["subscriptions"]
        assert subscription["id"] in {item["id"] for item in listed}
        approved = client.post(path)
        assert approved.status_code == 200 and approved.json()["subscription"]["state"] == "active"
    assert _code(governed.call(dana, "acme:lab:read_item", item_id="I-1")[1]) == "ok"
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    kinds = {r.kind for r in governed.running.run(audit.store.query(AuditFilter(tenant="acme"), limit=1000))}
    assert {"subscription.request", "subscription.approve", "subscription.revoke"} <= kinds


def test_consumers_see_only_their_own_and_cannot_reach_other_tenants(governed: Governed) -> None:
    erin = governed.token("consumer", sub="erin")
    assert _subscribe(governed, erin, "globex:items")[0] == 400
    assert _subscribe(governed, erin, "acme:nothing")[0] == 400
    _subscribe(governed, erin, "acme:items")
    with governed.rest(erin) as client:
        mine = client.get("/v1/subscriptions").json()["subscriptions"]
    assert mine and {item["subscriber"] for item in mine} == {"user:erin"}
    with governed.rest(governed.token("developer", team="team-a")) as client:
        refused = client.post("/v1/subscriptions", json={"api": "acme:items"})  # no subscriptions scope
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "A-AUTH-SCOPE"


def test_a_subscriber_is_a_user_or_agent_key(governed: Governed) -> None:
    """`bob` or `group:bob` would never match a caller's key: refused with the expected form."""
    admin = governed.token("admin")
    with governed.rest(admin) as client:
        for subscriber in ("bob", "group:bob", "user:", "user:user:bob", " user:bob"):
            answer = client.post("/v1/subscriptions", json={"api": "acme:items", "subscriber": subscriber})
            assert answer.status_code == 400, (subscriber, answer.text)
            assert answer.json()["error"]["code"] == "I-REQ-GOVERNANCE"
            assert "user:<id>, agent:<id>" in answer.json()["error"]["message"]
        accepted = client.post("/v1/subscriptions", json={"api": "acme:items", "subscriber": "agent:bot"})
    assert accepted.status_code in (200, 201), accepted.text
