"""A parked call resumes only for the principal that parked it, in its tenant, while it may call the tool.

Issue 35: a commit token committed any tenant's prepared call. Here alice (an admin of acme) prepares
a hold on `acme:holds:reserve` over the real fault backend; acme's other admin, globex's admin, a
globex user who has alice's very id, an acme consumer without a subscription and an agent whose
allow-list lacks the tool each try to commit and to discard it, over REST and over MCP: every try is
refused with an `A-AUTH-RESUME-*` code, audited with the prepared call's id, and the backend's ledger
shows no confirm or cancel; then alice's commit books exactly one confirm. The owner's discard
cancels once and the token then commits nothing. The same matrix runs against approval resume.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from colonnade.calls.commit_tool import COMMIT_TOOL_NAME, DISCARD_TOOL_NAME
from colonnade.store.audit_repo import AuditFilter
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.governed import Governed, governed_gateway

RESERVE = "acme:holds:reserve"
DROP = "acme:items:drop_item"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("parked-binding"), two_phase=True) as running:
        security = running.token("security", sub="officer")
        with running.rest(security) as client:
            agent = {"agent_id": "read-bot", "allowed_tools": ["acme:items:read_item"]}
            assert client.post("/v1/agents", json=agent).status_code == 201
        yield running


def _agent(governed: Governed, agent: str = "read-bot") -> str:
    body = {"sub": agent, "agent_id": agent, "tenant": "acme"}
    return governed.issuer.mint(body, audience=governed.resource)


def _intruders(governed: Governed) -> dict[str, tuple[str, str]]:
    """Who tries to take alice's parked call, and the code each must get."""
    return {
        "acme's other admin": (governed.token("admin", sub="bob"), "A-AUTH-RESUME-PRINCIPAL"),
        "globex's admin": (governed.token("admin", tenant="globex", sub="dave"), "A-AUTH-RESUME-TENANT"),
        "alice's id in globex": (
            governed.token("admin", tenant="globex", sub="alice"),
            "A-AUTH-RESUME-TENANT",
        ),
        "an unsubscribed consumer": (governed.token("consumer", sub="carol"), "A-AUTH-RESUME-PRINCIPAL"),
        "an agent not allow-listed": (_agent(governed), "A-AUTH-RESUME-PRINCIPAL"),
    }


def _alice(governed: Governed) -> str:
    return governed.token("admin", sub="alice")


def _effects(governed: Governed, reservation: str) -> list[str]:
    return [e["kind"] for e in governed.effects() if e.get("reservation_id") == reservation]


def _prepare(governed: Governed, token: str, item: str) -> tuple[str, str, str]:
    """(commit token, prepared call id, reservation id)."""
    status, result = governed.call(token, RESERVE, item_id=item)
    assert status == 200 and result["status"] == "success_prep", result
    return result["commit_token"], result["call_id"], result["output"]["reservation_id"]


def _rest(governed: Governed, token: str, action: str, commit_token: str) -> dict[str, Any]:
    with governed.rest(token) as client:
        response = client.post(f"/v1/calls/{action}", json={"commit_token": commit_token})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _mcp(governed: Governed, token: str, tool: str, commit_token: str) -> dict[str, Any]:
    async with governed.mcp(token) as client:
        result = await client.call_tool(tool, {"commit_token": commit_token})
    return dict((result.meta or {})[RESULT_META_KEY])


def _refusals_audited(governed: Governed, prepared_call_id: str) -> list[str | None]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    rows = governed.running.run(audit.store.query(AuditFilter(kind="call"), limit=2000))
    return [
        row.code
        for row in rows
        if (row.details.get("resume") or {}).get("parked_call_id") == prepared_call_id
        and (row.details.get("resume") or {}).get("refused")
    ]


async def test_only_the_owner_commits_a_prepared_call(governed: Governed) -> None:
    commit_token, prepared_id, reservation = _prepare(governed, _alice(governed), "H-1")
    expected: list[str] = []
    for who, (token, code) in _intruders(governed).items():
        for action in ("commit", "discard"):
            refused = _rest(governed, token, action, commit_token)
            assert refused["status"] == "terminal_error", (who, action, refused)
            assert refused["error"]["code"] == code, (who, action, refused)
            shown = refused["error"]["details"]
            if code == "A-AUTH-RESUME-TENANT":  # another tenant learns nothing about the call
                assert "tool" not in shown and "parked_call_id" not in shown, shown
            else:
                assert shown["parked_call_id"] == prepared_id
        for tool in (COMMIT_TOOL_NAME, DISCARD_TOOL_NAME):
            envelope = await _mcp(governed, token, tool, commit_token)
            assert envelope["error"]["code"] == code, (who, tool, envelope)
        expected += [code] * 4
    assert _effects(governed, reservation) == ["reserve"]
    assert sorted(_refusals_audited(governed, prepared_id)) == sorted(expected)

    committed = _rest(governed, _alice(governed), "commit", commit_token)
    assert committed["status"] == "success", committed
    assert committed["output"]["state"] == "confirmed"
    assert _effects(governed, reservation) == ["reserve", "confirm"]
    again = _rest(governed, _alice(governed), "commit", commit_token)
    assert again["error"]["code"] == "P-PRECOND-COMMIT-TOKEN"
    assert _effects(governed, reservation) == ["reserve", "confirm"]


async def test_the_owner_commits_over_mcp_after_refusals(governed: Governed) -> None:
    commit_token, _, reservation = _prepare(governed, _alice(governed), "H-2")
    bob, _ = _intruders(governed)["acme's other admin"]
    assert (await _mcp(governed, bob, COMMIT_TOOL_NAME, commit_token))["error"][
        "code"
    ] == "A-AUTH-RESUME-PRINCIPAL"
    committed = await _mcp(governed, _alice(governed), COMMIT_TOOL_NAME, commit_token)
    assert committed["status"] == "success", committed
    assert _effects(governed, reservation) == ["reserve", "confirm"]


def test_the_owner_discards_once_and_the_token_then_commits_nothing(governed: Governed) -> None:
    commit_token, _, reservation = _prepare(governed, _alice(governed), "H-3")
    discarded = _rest(governed, _alice(governed), "discard", commit_token)
    assert discarded["status"] == "success", discarded
    assert discarded["output"]["state"] == "cancelled"
    for action in ("discard", "commit"):
        late = _rest(governed, _alice(governed), action, commit_token)
        assert late["error"]["code"] == "P-PRECOND-COMMIT-TOKEN", late
        assert late["error"]["details"]["state"] == "rolled_back"
    assert _effects(governed, reservation) == ["reserve", "cancel"]


def test_a_committer_who_may_no_longer_call_the_tool_is_refused_until_it_may(governed: Governed) -> None:
    erin = governed.token("consumer", sub="erin")
    with governed.rest(erin) as client:
        subscribed = client.post("/v1/subscriptions", json={"api": "acme:holds"}).json()["subscription"]
        assert subscribed["state"] == "active"
    commit_token, prepared_id, reservation = _prepare(governed, erin, "H-4")
    with governed.rest(erin) as client:
        assert client.delete(f"/v1/subscriptions/{subscribed['id']}").status_code == 200
    refused = _rest(governed, erin, "commit", commit_token)
    assert refused["error"]["code"] == "A-AUTH-SUBSCRIPTION-REQUIRED", refused
    assert _effects(governed, reservation) == ["reserve"]
    assert _refusals_audited(governed, prepared_id) == ["A-AUTH-SUBSCRIPTION-REQUIRED"]
    with governed.rest(erin) as client:
        assert client.post("/v1/subscriptions", json={"api": "acme:holds"}).status_code in (200, 201)
    committed = _rest(governed, erin, "commit", commit_token)
    assert committed["status"] == "success", committed
    assert _effects(governed, reservation) == ["reserve", "confirm"]


# -- approval resume ------------------------------------------------------------------------------


def _drops(governed: Governed, item: str) -> int:
    return sum(1 for e in governed.effects() if e["kind"] == "drop" and e.get("item_id") == item)


def _approved(governed: Governed, item: str) -> str:
    status, result = governed.call(_alice(governed), DROP, item_id=item)
    assert status == 200 and result["status"] == "pending", result
    approval = str(result["pending"]["token"])
    with governed.rest(governed.token("admin", sub="bob")) as client:
        assert client.post(f"/v1/approvals/{approval}/approve").status_code == 200
    return approval


def _approval_refusals(governed: Governed, approval: str) -> list[str | None]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    rows = governed.running.run(audit.store.query(AuditFilter(kind="approval.refuse"), limit=2000))
    return [row.code for row in rows if row.details.get("approval_id") == approval]


async def test_only_the_requester_or_its_approver_resumes_an_approved_call(governed: Governed) -> None:
    approval = _approved(governed, "X-1")
    with governed.rest(_alice(governed)) as client:
        approval_token = client.get(f"/v1/approvals/{approval}").json()["approval"]["token"]
    intruders = {
        "acme's third admin": (governed.token("admin", sub="frank"), 403, "A-AUTH-RESUME-PRINCIPAL"),
        "globex's admin": (
            governed.token("admin", tenant="globex", sub="dave"),
            404,
            "I-REQ-UNKNOWN-RESOURCE",
        ),
        "alice's id in globex": (
            governed.token("admin", tenant="globex", sub="alice"),
            404,
            "I-REQ-UNKNOWN-RESOURCE",
        ),
        "an unsubscribed consumer": (governed.token("consumer", sub="carol"), 404, "I-REQ-UNKNOWN-RESOURCE"),
        "an agent not allow-listed": (_agent(governed), 404, "I-REQ-UNKNOWN-RESOURCE"),
    }
    for who, (token, http, code) in intruders.items():
        with governed.rest(token) as client:
            response = client.post(f"/v1/approvals/{approval}/resume")
            assert (response.status_code, response.json()["error"]["code"]) == (http, code), who
            shown = client.get(f"/v1/approvals/{approval}")
            assert "token" not in shown.json().get("approval", {}), who
        async with governed.mcp(token) as mcp:  # the approval's token does not carry over to them
            retried = await mcp.call_tool(
                "acme__items__drop_item",
                {"item_id": "X-1"},
                meta={"colonnade/approval_token": approval_token},
            )
        envelope = dict((retried.meta or {})[RESULT_META_KEY])
        assert envelope["status"] != "success", (who, envelope)
    assert _drops(governed, "X-1") == 0
    refused = _approval_refusals(governed, approval)
    assert refused.count("A-AUTH-RESUME-PRINCIPAL") == 3  # frank; carol and the agent cannot even see it
    assert refused.count("A-AUTH-RESUME-TENANT") == 2  # globex's admin, and alice's id in globex
    assert "A-AUTH-APPROVAL-TOKEN" in refused  # frank retried the call with alice's approval token

    with governed.rest(_alice(governed)) as client:
        ran = client.post(f"/v1/approvals/{approval}/resume").json()
    assert ran["result"]["status"] == "success", ran
    assert _drops(governed, "X-1") == 1


def test_the_approver_may_run_the_call_it_approved(governed: Governed) -> None:
    approval = _approved(governed, "X-2")
    with governed.rest(governed.token("admin", sub="bob")) as client:
        ran = client.post(f"/v1/approvals/{approval}/resume").json()
    assert ran["result"]["status"] == "success", ran
    assert _drops(governed, "X-2") == 1
