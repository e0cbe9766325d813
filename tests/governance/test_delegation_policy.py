"""A policy on the actor chain, through real Rego in a running gateway: the shipped example
`delegation_hops.rego` refuses a destructive call two hops from a person with the policy's typed
refusal, while the person's own agent is only parked for approval, and the backend sees neither."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from colonnade.config import DelegationSettings, PolicySettings
from tests.support.delegation import KEYS, call, chain_token, code, records, register_agents
from tests.support.dpop import proof
from tests.support.governed import Governed, governed_gateway

# The gateway compiles its policy set in a child process first (crash-safe).
pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "src/colonnade/policies/examples/delegation_hops.rego"
DROP = "acme:items:drop_item"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    policies = tmp_path_factory.mktemp("chain-policies")
    shutil.copy(EXAMPLE, policies / EXAMPLE.name)
    delegation = DelegationSettings(enabled=True)
    policy = PolicySettings(directories=[policies])
    with governed_gateway(tmp_path_factory.mktemp("gw"), policy=policy, delegation=delegation) as running:
        register_agents(running)
        yield running


def test_a_destructive_call_two_hops_from_a_person_is_refused_by_the_policy(governed: Governed) -> None:
    hits = len(governed.backend_hits())
    token = chain_token(governed, "planner", "researcher")
    refused = call(governed, token, "researcher", DROP)
    assert code(refused) == "A-AUTH-POLICY-DENIED", refused
    message = refused["error"]["message"]
    assert "researcher acts 2 hops from user:alice" in message
    (record,) = [r for r in records(governed, kind="call") if r.call_id == refused["call_id"]]
    assert (record.decision, record.code) == ("deny", "A-AUTH-POLICY-DENIED")
    assert record.details["actor_chain"] == ["user:alice", "agent:planner", "agent:researcher"]
    assert len(governed.backend_hits()) == hits


def test_the_persons_own_agent_is_parked_for_approval_not_refused(governed: Governed) -> None:
    hits = len(governed.backend_hits())
    answer = call(governed, chain_token(governed, "planner"), "planner", DROP)
    assert answer["status"] == "pending" and answer["error"] is None, answer
    assert len(governed.backend_hits()) == hits


def test_a_read_two_hops_from_the_person_is_allowed(governed: Governed) -> None:
    answer = call(
        governed, chain_token(governed, "planner", "researcher"), "researcher", "acme:items:read_item"
    )
    assert code(answer) == "ok", answer


def test_an_approved_call_resumed_by_the_delegated_agent_runs_once_with_its_chain(governed: Governed) -> None:
    token, key = chain_token(governed, "planner"), KEYS["planner"]
    asked = call(governed, token, "planner", DROP, item_id="D-1")
    assert asked["status"] == "pending", asked
    approval = asked["pending"]["token"]
    bob = governed.token("admin", sub="bob")
    with governed.rest(bob) as client:
        decided = client.post(f"/v1/approvals/{approval}/approve", json={"comment": "fine"})
    assert decided.status_code == 200, decided.text
    shown_url = f"{governed.base_url}/v1/approvals/{approval}"
    headers = {"Authorization": f"DPoP {token}", "DPoP": proof(key, "GET", shown_url, token)}
    shown = httpx2.get(shown_url, headers=headers, timeout=30.0)
    assert shown.status_code == 200, shown.text
    ran = call(governed, token, "planner", DROP, item_id="D-1", approval=shown.json()["approval"]["token"])
    assert code(ran) == "ok", ran
    assert sum(1 for e in governed.effects() if e["kind"] == "drop" and e["item_id"] == "D-1") == 1
    (record,) = [r for r in records(governed, kind="call") if r.call_id == ran["call_id"]]
    assert record.details["actor_chain"] == ["user:alice", "agent:planner"]
