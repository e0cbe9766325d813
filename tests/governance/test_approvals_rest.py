"""Approvals over REST against a real backend ledger: a destructive call runs only once approved.

Requester and approvers hold real tokens of the test issuer; every refusal (self-approval, a
persona without the right, another tenant, a replayed, foreign or re-targeted token) leaves the
backend's ledger untouched and an audit record behind.
"""

from __future__ import annotations

from typing import Any

from colonnade.store.audit_repo import AuditFilter
from tests.support.governed import Governed

DROP = "acme:items:drop_item"


def _drops(governed: Governed, item: str) -> int:
    return sum(1 for effect in governed.effects() if effect["kind"] == "drop" and effect["item_id"] == item)


def _ask(governed: Governed, token: str, item: str) -> str:
    status, result = governed.call(token, DROP, item_id=item)
    assert status == 200, result
    assert result["status"] == "pending" and result["error"] is None, result
    pending = result["pending"]
    assert pending["reason"] == "awaiting_approval" and pending["token"].startswith("ap_")
    assert "approve" in pending["next_action"]
    return str(pending["token"])


def _post(governed: Governed, token: str, path: str, **body: Any) -> tuple[int, dict[str, Any]]:
    with governed.rest(token) as client:
        response = client.post(path, json=body)
    return response.status_code, response.json()


def _get(governed: Governed, token: str, path: str) -> tuple[int, dict[str, Any]]:
    with governed.rest(token) as client:
        response = client.get(path)
    return response.status_code, response.json()


def _audit_codes(governed: Governed, kind: str) -> list[str | None]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    rows = governed.running.run(audit.store.query(AuditFilter(kind=kind), limit=1000))
    return [row.code for row in rows]


def _people(governed: Governed) -> tuple[str, str]:
    alice = governed.token("admin", sub="alice")
    bob = governed.token("admin", sub="bob")
    return alice, bob


def test_pending_then_approved_then_run_with_the_token_once(governed: Governed) -> None:
    alice, bob = _people(governed)
    approval = _ask(governed, alice, "H-1")
    assert _drops(governed, "H-1") == 0

    status, listed = _get(governed, bob, "/v1/approvals?state=pending")
    assert status == 200 and approval in [entry["id"] for entry in listed["approvals"]]
    status, decided = _post(governed, bob, f"/v1/approvals/{approval}/approve", comment="ok, stale item")
    assert status == 200, decided
    assert decided["approval"]["state"] == "approved" and "token" not in decided["approval"]

    status, shown = _get(governed, alice, f"/v1/approvals/{approval}")
    token = shown["approval"]["token"]
    assert shown["approval"]["approver"] == "user:bob" and shown["approval"]["comment"] == "ok, stale item"
    assert _drops(governed, "H-1") == 0

    with governed.rest(alice) as client:
        ran = client.post(
            "/v1/calls",
            json={"tool_id": DROP, "input": {"item_id": "H-1"}},
            headers={"Colonnade-Approval-Token": token},
        ).json()
    assert ran["status"] == "success", ran
    assert _drops(governed, "H-1") == 1

    replay = {"tool_id": DROP, "input": {"item_id": "H-1"}, "approval_token": token}
    with governed.rest(alice) as client:
        again = client.post("/v1/calls", json=replay).json()
    assert again["error"]["code"] == "A-AUTH-APPROVAL-REPLAY"
    assert _drops(governed, "H-1") == 1
    assert "A-AUTH-APPROVAL-REPLAY" in _audit_codes(governed, "approval.refuse")
    assert _get(governed, alice, f"/v1/approvals/{approval}")[1]["approval"]["state"] == "used"
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    trail = governed.running.run(audit.store.query(AuditFilter(actor="user:alice"), limit=1000))
    mine = [row for row in trail if row.details.get("approval_id") == approval]
    assert [row.kind for row in mine] == ["approval.request", "approval.use", "approval.refuse"]
    assert mine[1].call_id == ran["call_id"] and mine[0].call_id is not None


def test_approve_and_run_at_once(governed: Governed) -> None:
    alice, bob = _people(governed)
    approval = _ask(governed, alice, "H-2")
    status, answer = _post(governed, bob, f"/v1/approvals/{approval}/approve", run=True)
    assert status == 200, answer
    assert answer["result"]["status"] == "success", answer
    assert _drops(governed, "H-2") == 1
    status, again = _post(governed, alice, f"/v1/approvals/{approval}/resume")
    assert (status, again["error"]["code"]) == (409, "P-PRECOND-APPROVAL-STATE")
    assert _drops(governed, "H-2") == 1


def test_the_requester_resumes_its_approved_call(governed: Governed) -> None:
    alice, bob = _people(governed)
    approval = _ask(governed, alice, "H-3")
    status, refused = _post(governed, alice, f"/v1/approvals/{approval}/resume")
    assert (status, refused["error"]["code"]) == (409, "P-PRECOND-APPROVAL-STATE")
    assert _post(governed, bob, f"/v1/approvals/{approval}/approve")[0] == 200
    status, answer = _post(governed, alice, f"/v1/approvals/{approval}/resume")
    assert status == 200 and answer["result"]["status"] == "success", answer
    assert _drops(governed, "H-3") == 1


def test_self_approval_is_refused_and_audited(governed: Governed) -> None:
    alice, _ = _people(governed)
    approval = _ask(governed, alice, "S-1")
    status, refused = _post(governed, alice, f"/v1/approvals/{approval}/approve")
    assert (status, refused["error"]["code"]) == (403, "A-AUTH-APPROVAL-SELF")
    assert _get(governed, alice, f"/v1/approvals/{approval}")[1]["approval"]["state"] == "pending"
    assert _drops(governed, "S-1") == 0
    assert "A-AUTH-APPROVAL-SELF" in _audit_codes(governed, "approval.refuse")


def test_a_persona_without_the_right_cannot_approve(governed: Governed) -> None:
    alice, _ = _people(governed)
    owner = governed.token("product_owner", team="team-a", sub="carol")
    approval = _ask(governed, alice, "P-1")
    status, refused = _post(governed, owner, f"/v1/approvals/{approval}/approve")
    assert (status, refused["error"]["code"]) == (403, "A-AUTH-APPROVER")
    assert _drops(governed, "P-1") == 0
    assert "A-AUTH-APPROVER" in _audit_codes(governed, "approval.refuse")


def test_an_admin_of_another_tenant_cannot_see_or_approve(governed: Governed) -> None:
    alice, _ = _people(governed)
    stranger = governed.token("admin", tenant="globex", sub="dave")
    approval = _ask(governed, alice, "T-1")
    status, refused = _post(governed, stranger, f"/v1/approvals/{approval}/approve")
    assert (status, refused["error"]["code"]) == (404, "I-REQ-UNKNOWN-RESOURCE")
    listed = _get(governed, stranger, "/v1/approvals")[1]["approvals"]
    assert approval not in [entry["id"] for entry in listed]
    assert _drops(governed, "T-1") == 0


def test_a_token_for_other_arguments_or_another_caller_runs_nothing(governed: Governed) -> None:
    alice, bob = _people(governed)
    approval = _ask(governed, alice, "A-1")
    assert _post(governed, bob, f"/v1/approvals/{approval}/approve")[0] == 200
    token = _get(governed, alice, f"/v1/approvals/{approval}")[1]["approval"]["token"]
    swapped = {"tool_id": DROP, "input": {"item_id": "A-2"}, "approval_token": token}
    with governed.rest(alice) as client:
        refused = client.post("/v1/calls", json=swapped).json()
    assert refused["error"]["code"] == "A-AUTH-APPROVAL-ARGUMENTS"
    foreign = {"tool_id": DROP, "input": {"item_id": "A-1"}, "approval_token": token}
    with governed.rest(bob) as client:
        stolen = client.post("/v1/calls", json=foreign).json()
    assert stolen["error"]["code"] == "A-AUTH-APPROVAL-TOKEN"
    forged = {"tool_id": DROP, "input": {"item_id": "A-1"}, "approval_token": token[:-4] + "AAAA"}
    with governed.rest(alice) as client:
        bad = client.post("/v1/calls", json=forged).json()
    assert bad["error"]["code"] == "A-AUTH-APPROVAL-TOKEN"
    assert _drops(governed, "A-1") == 0 and _drops(governed, "A-2") == 0
    codes = _audit_codes(governed, "approval.refuse")
    assert {"A-AUTH-APPROVAL-ARGUMENTS", "A-AUTH-APPROVAL-TOKEN"} <= set(codes)


def test_a_denied_call_never_runs(governed: Governed) -> None:
    alice, bob = _people(governed)
    approval = _ask(governed, alice, "D-1")
    status, denied = _post(governed, bob, f"/v1/approvals/{approval}/deny", comment="not today")
    assert status == 200 and denied["approval"]["state"] == "denied"
    status, refused = _post(governed, alice, f"/v1/approvals/{approval}/resume")
    assert (status, refused["error"]["code"]) == (409, "P-PRECOND-APPROVAL-STATE")
    status, late = _post(governed, bob, f"/v1/approvals/{approval}/approve")
    assert (status, late["error"]["code"]) == (409, "P-PRECOND-APPROVAL-STATE")
    assert _drops(governed, "D-1") == 0


def test_a_call_its_schema_refuses_is_not_parked(governed: Governed) -> None:
    alice, bob = _people(governed)
    before = len(_get(governed, bob, "/v1/approvals?state=pending")[1]["approvals"])
    status, result = governed.call(alice, DROP, item_id="V-1", colour="red")
    assert (status, result["error"]["code"]) == (200, "I-REQ-SCHEMA")
    assert len(_get(governed, bob, "/v1/approvals?state=pending")[1]["approvals"]) == before


def _documented() -> tuple[dict[str, set[str]], set[str]]:
    """From docs/approvals.md: each route's answer keys, and the fields an approval reads as."""
    import re

    from tests.support.repo import ROOT

    page = (ROOT / "docs" / "approvals.md").read_text(encoding="utf-8")
    answers = {}
    for route, answer in re.findall(r"^\| `((?:GET|POST) /v1/approvals[^`]*)`.*\| (`\{.*)\|$", page, re.M):
        answers[route.split("[")[0]] = set(re.findall(r'"(\w+)":', answer))
    fields = re.search(r"reads as `\{([^}]*)\}`", page, re.S)
    assert fields is not None, "docs/approvals.md lost the fields of an approval"
    return answers, {name.strip() for name in fields.group(1).split(",")}


def test_the_answers_have_the_shape_docs_approvals_md_gives(governed: Governed) -> None:
    answers, fields = _documented()
    assert set(answers) == {
        "GET /v1/approvals",
        "GET /v1/approvals/{id}",
        "POST /v1/approvals/{id}/approve",
        "POST /v1/approvals/{id}/deny",
        "POST /v1/approvals/{id}/resume",
    }, answers
    alice, bob = _people(governed)
    approval = _ask(governed, alice, "H-shape")
    listed = _get(governed, bob, "/v1/approvals")[1]
    shown = _get(governed, bob, f"/v1/approvals/{approval}")[1]
    decided = _post(governed, bob, f"/v1/approvals/{approval}/approve", run=True)[1]
    assert set(listed) == answers["GET /v1/approvals"]
    assert set(shown) == answers["GET /v1/approvals/{id}"]
    assert set(decided) == answers["POST /v1/approvals/{id}/approve"]  # with run: the result too
    assert set(shown["approval"]) == fields  # bob is not the requester: no token
    assert set(decided["result"]) >= {"call_id", "status", "output", "metrics"}
