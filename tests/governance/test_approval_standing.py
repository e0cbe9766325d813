"""A resumed approved call re-checks its requester: a key or agent revoked after it asked runs nothing;
the gateway's purge round deletes finished approvals past retention.

Resuming (`/resume`, or approving with `run`) runs the call as the requester; between asking and
running its credential may have been revoked. The refusal carries the credential's code, is an
`approval.refuse` audit record, and the backend's ledger stays untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from colonnade.store.audit_repo import AuditFilter
from tests.support.governed import Governed, governed_gateway

DROP = "acme:items:drop_item"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("standing")) as running:
        yield running


def _post(governed: Governed, token: str, path: str, **body: Any) -> tuple[int, dict[str, Any]]:
    with governed.rest(token) as client:
        response = client.post(path, json=body)
    return response.status_code, response.json()


def _drops(governed: Governed, item: str) -> int:
    return sum(1 for effect in governed.effects() if effect["kind"] == "drop" and effect["item_id"] == item)


def _ask(governed: Governed, token: str, item: str) -> str:
    status, result = governed.call(token, DROP, item_id=item)
    assert status == 200 and result["status"] == "pending", result
    return str(result["pending"]["token"])


def _refusals(governed: Governed, approval: str) -> list[str | None]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    rows = governed.running.run(audit.store.query(AuditFilter(kind="approval.refuse"), limit=1000))
    return [row.code for row in rows if row.details.get("approval_id") == approval]


def _key(governed: Governed, admin: str, owner: str) -> tuple[str, str]:
    status, made = _post(governed, admin, "/v1/keys", owner=owner, persona="admin", tenant="acme")
    assert status == 201, made
    return str(made["token"]), str(made["key"]["id"])


def _revoke_key(governed: Governed, admin: str, key_id: str) -> None:
    with governed.rest(admin) as client:
        assert client.delete(f"/v1/keys/{key_id}").status_code == 200


def test_a_key_revoked_after_asking_cannot_be_resumed(governed: Governed) -> None:
    admin, bob = governed.token("admin", sub="root"), governed.token("admin", sub="bob")
    key, key_id = _key(governed, admin, "keyed-alice")
    approval = _ask(governed, key, "R-1")
    assert _post(governed, bob, f"/v1/approvals/{approval}/approve")[0] == 200
    _revoke_key(governed, admin, key_id)

    status, refused = _post(governed, bob, f"/v1/approvals/{approval}/resume")
    assert status == 200 and refused["result"]["error"]["code"] == "A-AUTH-REVOKED", refused
    assert _drops(governed, "R-1") == 0
    assert _refusals(governed, approval) == ["A-AUTH-REVOKED"]


def test_approving_and_running_a_revoked_keys_call_runs_nothing(governed: Governed) -> None:
    admin, bob = governed.token("admin", sub="root"), governed.token("admin", sub="bob")
    key, key_id = _key(governed, admin, "keyed-dave")
    approval = _ask(governed, key, "R-2")
    _revoke_key(governed, admin, key_id)

    status, answer = _post(governed, bob, f"/v1/approvals/{approval}/approve", run=True)
    assert status == 200 and answer["approval"]["state"] == "approved", answer
    assert answer["result"]["error"]["code"] == "A-AUTH-REVOKED"
    assert _drops(governed, "R-2") == 0
    assert _refusals(governed, approval) == ["A-AUTH-REVOKED"]


def test_an_unrevoked_key_resumes_its_call(governed: Governed) -> None:
    admin, bob = governed.token("admin", sub="root"), governed.token("admin", sub="bob")
    key, _ = _key(governed, admin, "keyed-erin")
    approval = _ask(governed, key, "R-3")
    assert _post(governed, bob, f"/v1/approvals/{approval}/approve")[0] == 200
    status, answer = _post(governed, key, f"/v1/approvals/{approval}/resume")
    assert status == 200 and answer["result"]["status"] == "success", answer
    assert _drops(governed, "R-3") == 1


def test_an_agent_revoked_after_asking_cannot_be_resumed(governed: Governed) -> None:
    security, bob = governed.token("security", sub="officer"), governed.token("admin", sub="bob")
    with governed.rest(security) as client:
        registered = client.post("/v1/agents", json={"agent_id": "drop-bot", "allowed_tools": [DROP]})
        assert registered.status_code == 201, registered.text
    agent = governed.issuer.mint(
        {"sub": "drop-bot", "agent_id": "drop-bot", "tenant": "acme"}, audience=governed.resource, ttl_s=300
    )
    approval = _ask(governed, agent, "R-4")
    assert _post(governed, bob, f"/v1/approvals/{approval}/approve")[0] == 200
    with governed.rest(security) as client:
        assert client.delete("/v1/agents/drop-bot").status_code == 200

    status, refused = _post(governed, bob, f"/v1/approvals/{approval}/resume")
    assert status == 200 and refused["result"]["error"]["code"] == "A-AUTH-REVOKED", refused
    assert _drops(governed, "R-4") == 0
    assert _refusals(governed, approval) == ["A-AUTH-REVOKED"]


def test_the_gateways_purge_round_deletes_finished_approvals_only(governed: Governed) -> None:
    alice, bob = governed.token("admin", sub="alice"), governed.token("admin", sub="bob")
    denied, waiting = _ask(governed, alice, "P-1"), _ask(governed, alice, "P-2")
    assert _post(governed, bob, f"/v1/approvals/{denied}/deny", comment="no")[0] == 200
    gateway = governed.running.gateway
    retention = timedelta(seconds=gateway.settings.approvals.retention_s)
    _, _, purged = governed.running.run(gateway.purge_round(now=datetime.now(UTC) + retention))
    assert purged >= 1
    with governed.rest(alice) as client:
        assert client.get(f"/v1/approvals/{denied}").status_code == 404
        assert client.get(f"/v1/approvals/{waiting}").json()["approval"]["state"] == "pending"


def test_authorization_decides_again_when_the_call_resumes(governed: Governed) -> None:
    erin, bob = governed.token("consumer", sub="erin"), governed.token("admin", sub="bob")
    with governed.rest(erin) as client:
        subscription = client.post("/v1/subscriptions", json={"api": "acme:items"}).json()["subscription"]
    assert subscription["state"] == "active"
    approval = _ask(governed, erin, "A-1")  # subscribed: a consumer may ask for the write
    assert _post(governed, bob, f"/v1/approvals/{approval}/approve")[0] == 200
    with governed.rest(erin) as client:
        assert client.delete(f"/v1/subscriptions/{subscription['id']}").status_code == 200

    status, refused = _post(governed, bob, f"/v1/approvals/{approval}/resume")
    assert status == 200, refused
    assert refused["result"]["error"]["code"] == "A-AUTH-SUBSCRIPTION-REQUIRED", refused
    assert _drops(governed, "A-1") == 0
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    calls = governed.running.run(audit.store.query(AuditFilter(kind="call", actor="user:erin"), limit=100))
    assert "A-AUTH-SUBSCRIPTION-REQUIRED" in [row.code for row in calls]
