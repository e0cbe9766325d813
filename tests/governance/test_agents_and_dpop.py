"""Agents: registered with a tenant, an allow-list and a key; their tokens live at most 10 minutes
and are bound to that key by DPoP. Every attack is refused with its code, nothing executes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from joserfc.jwk import ECKey

from colonnade.store.audit_repo import AuditFilter
from tests.support.dpop import proof
from tests.support.governed import Governed, governed_gateway

AGENT_KEY = ECKey.generate_key("P-256", auto_kid=True)


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("agents"), dynamic_registration=True) as running:
        security = running.token("security", sub="officer")
        with running.rest(security) as client:
            bound = {
                "agent_id": "invoice-bot",
                "allowed_tools": ["acme:items:*", "acme:lab:audit_item"],
                "public_key": dict(AGENT_KEY.as_dict(private=False)),
            }
            assert client.post("/v1/agents", json=bound).status_code == 201
            plain = {"agent_id": "plain-bot", "allowed_tools": ["acme:items:read_item"]}
            assert client.post("/v1/agents", json=plain).status_code == 201
        yield running


def _agent_token(governed: Governed, agent: str = "invoice-bot", *, ttl: int = 300, **claims: Any) -> str:
    body: dict[str, Any] = {"sub": agent, "agent_id": agent, "tenant": "acme"}
    if agent == "invoice-bot":
        body["cnf"] = {"jkt": AGENT_KEY.thumbprint()}
    body.update(claims)
    return governed.issuer.mint(body, audience=governed.resource, ttl_s=ttl)


def _call(
    governed: Governed, token: str, tool: str, *, dpop: str | None = None, scheme: str = "DPoP"
) -> dict[str, Any]:
    url = f"{governed.base_url}/v1/calls"
    headers = {"Authorization": f"{scheme} {token}"}
    if dpop is not None:
        headers["DPoP"] = dpop
    arguments = {"item_id": "I-1", "value": "v"} if tool.endswith("write_item") else {"item_id": "I-1"}
    response = httpx2.post(url, json={"tool_id": tool, "input": arguments}, headers=headers)
    return {"http": response.status_code, **response.json()}


def _code(answer: dict[str, Any]) -> str:
    return "ok" if answer.get("status") == "success" else str(answer["error"]["code"])


def test_a_bound_agent_token_with_a_fresh_proof_calls_its_allow_list(governed: Governed) -> None:
    token, url = _agent_token(governed), f"{governed.base_url}/v1/calls"
    for tool, expected in (
        ("acme:items:read_item", "ok"),
        ("acme:items:write_item", "ok"),
        ("acme:items:drop_item", "I-REQ-UNKNOWN-TOOL"),  # not safe for agents: a glob does not reach it
        ("acme:items:audit_item", "I-REQ-UNKNOWN-TOOL"),
        ("acme:lab:read_item", "I-REQ-UNKNOWN-TOOL"),  # outside its allow-list
        ("globex:items:read_item", "I-REQ-UNKNOWN-TOOL"),  # another tenant
    ):
        answer = _call(governed, token, tool, dpop=proof(AGENT_KEY, "POST", url, token))
        assert _code(answer) == expected, (tool, answer)


def test_an_exactly_named_unsafe_tool_is_reachable(governed: Governed) -> None:
    token, url = _agent_token(governed), f"{governed.base_url}/v1/calls"
    hits = len(governed.backend_hits())
    answer = _call(governed, token, "acme:lab:audit_item", dpop=proof(AGENT_KEY, "POST", url, token))
    assert _code(answer) != "I-REQ-UNKNOWN-TOOL"  # authorized; the backend has no such route (404)
    assert len(governed.backend_hits()) == hits + 1


def test_attacks_on_agent_tokens_are_refused_and_nothing_runs(governed: Governed) -> None:
    url = f"{governed.base_url}/v1/calls"
    other_key = ECKey.generate_key("P-256", auto_kid=True)
    token = _agent_token(governed)
    replayed = proof(AGENT_KEY, "POST", url, token)
    assert _code(_call(governed, token, "acme:items:write_item", dpop=replayed)) == "ok"
    hits, effects = len(governed.backend_hits()), len(governed.effects())
    long_lived = _agent_token(governed, ttl=11 * 60)
    cases = {
        "A-AUTH-DPOP-REPLAY": _call(governed, token, "acme:items:write_item", dpop=replayed),
        "A-AUTH-DPOP-INVALID": _call(
            governed,
            token,
            "acme:items:write_item",
            dpop=proof(AGENT_KEY, "POST", f"{governed.base_url}/v1/tools", token),
        ),
        "A-AUTH-DPOP-REQUIRED": _call(governed, token, "acme:items:write_item", scheme="Bearer"),
        "A-AUTH-AGENT-TOKEN-LIFETIME": _call(
            governed, long_lived, "acme:items:write_item", dpop=proof(AGENT_KEY, "POST", url, long_lived)
        ),
        "A-AUTH-AGENT": _call(
            governed, _agent_token(governed, cnf=None), "acme:items:write_item", scheme="Bearer"
        ),
    }
    wrong_method = proof(AGENT_KEY, "GET", url, token)
    wrong_key = proof(other_key, "POST", url, token)
    old = proof(AGENT_KEY, "POST", url, token, issued_at=time.time() - 600)
    other_token = proof(AGENT_KEY, "POST", url, _agent_token(governed))
    for bad in (wrong_method, wrong_key, old, other_token):
        assert _code(_call(governed, token, "acme:items:write_item", dpop=bad)) == "A-AUTH-DPOP-INVALID"
    for code, answer in cases.items():
        assert answer["http"] == 401 and _code(answer) == code, (code, answer)
    assert len(governed.backend_hits()) == hits and len(governed.effects()) == effects
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    failures = governed.running.run(audit.store.query(AuditFilter(kind="auth.failure"), limit=1000))
    assert set(cases) | {"A-AUTH-DPOP-INVALID"} <= {record.code for record in failures}


def test_an_agent_outside_its_allow_list_is_refused_and_audited(governed: Governed) -> None:
    token, url = _agent_token(governed), f"{governed.base_url}/v1/calls"
    hits = len(governed.backend_hits())
    answer = _call(governed, token, "acme:lab:write_item", dpop=proof(AGENT_KEY, "POST", url, token))
    assert _code(answer) == "I-REQ-UNKNOWN-TOOL" and len(governed.backend_hits()) == hits
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    calls = governed.running.run(audit.store.query(AuditFilter(actor="agent:invoice-bot"), limit=1000))
    refused = [record for record in calls if record.call_id == answer["call_id"]]
    assert len(refused) == 1 and refused[0].decision == "deny" and refused[0].tool == "acme:lab:write_item"
    assert refused[0].reasons == ["not on the agent's allow-list"]


def test_unregistered_foreign_and_revoked_agents_are_refused(governed: Governed) -> None:
    assert (
        _code(_call(governed, _agent_token(governed, "ghost-bot"), "acme:items:read_item", scheme="Bearer"))
        == "A-AUTH-AGENT"
    )
    foreign = _agent_token(governed, "plain-bot", tenant="globex")
    assert _code(_call(governed, foreign, "acme:items:read_item", scheme="Bearer")) == "A-AUTH-AGENT"
    plain = _agent_token(governed, "plain-bot")
    assert _code(_call(governed, plain, "acme:items:read_item", scheme="Bearer")) == "ok"
    assert _code(_call(governed, plain, "acme:items:write_item", scheme="Bearer")) == "I-REQ-UNKNOWN-TOOL"
    with governed.rest(governed.token("security", sub="officer")) as client:
        assert client.delete("/v1/agents/plain-bot").json()["agent"]["revoked_at"]
    hits = len(governed.backend_hits())
    assert _code(_call(governed, plain, "acme:items:read_item", scheme="Bearer")) == "A-AUTH-REVOKED"
    assert len(governed.backend_hits()) == hits


def test_agents_are_registered_within_the_officers_tenant(governed: Governed) -> None:
    with governed.rest(governed.token("security", sub="officer")) as client:
        foreign = client.post("/v1/agents", json={"allowed_tools": ["globex:items:*"]})
        assert foreign.status_code == 400 and foreign.json()["error"]["code"] == "I-REQ-GOVERNANCE"
        other_tenant = client.post(
            "/v1/agents", json={"tenant": "globex", "allowed_tools": ["globex:items:*"]}
        )
        assert other_tenant.status_code == 403 and other_tenant.json()["error"]["code"] == "A-AUTH-FORBIDDEN"
        private = client.post(
            "/v1/agents",
            json={"allowed_tools": ["acme:items:*"], "public_key": dict(AGENT_KEY.as_dict(private=True))},
        )
        assert private.status_code == 400
        listed = client.get("/v1/agents").json()["agents"]
        assert {agent["id"] for agent in listed} >= {"invoice-bot", "plain-bot"}
    with governed.rest(governed.token("developer", team="team-a")) as client:
        assert client.post("/v1/agents", json={"allowed_tools": ["acme:items:*"]}).status_code == 403


def test_dynamic_client_registration_registers_an_agent(governed: Governed) -> None:
    key = ECKey.generate_key("P-256", auto_kid=True)
    metadata = {
        "client_name": "reporting bot",
        "grant_types": ["client_credentials"],
        "jwks": {"keys": [dict(key.as_dict(private=False))]},
        "colonnade_allowed_tools": ["acme:items:read_item"],
    }
    assert httpx2.post(f"{governed.base_url}/register", json=metadata).status_code == 401
    with governed.rest(governed.token("consumer")) as client:
        assert client.post("/register", json=metadata).status_code == 403
    with governed.rest(governed.token("security", sub="officer")) as client:
        registered = client.post("/register", json=metadata)
        assert registered.status_code == 201, registered.text
        bad = client.post("/register", json={"client_name": "no list"})
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_client_metadata"
    client_id = registered.json()["client_id"]
    assert registered.json()["colonnade_tenant"] == "acme"
    token = governed.issuer.mint(
        {"sub": client_id, "agent_id": client_id, "cnf": {"jkt": key.thumbprint()}},
        audience=governed.resource,
    )
    url = f"{governed.base_url}/v1/calls"
    assert _code(_call(governed, token, "acme:items:read_item", dpop=proof(key, "POST", url, token))) == "ok"


@pytest.mark.parametrize("confirmation", [{"jkt": 123}, {"jkt": ["x"]}, {"jkt": ""}, "jkt", ["jkt"]])
def test_a_malformed_key_binding_binds_to_no_key(governed: Governed, confirmation: object) -> None:
    """A token whose `cnf` or `cnf.jkt` is malformed is never taken for an unbound token (fail-closed)."""
    token = governed.token("admin", cnf=confirmation)
    assert _code(_call(governed, token, "acme:items:read_item", scheme="Bearer")) == "A-AUTH-DPOP-REQUIRED"
    url = f"{governed.base_url}/v1/calls"
    answer = _call(governed, token, "acme:items:read_item", dpop=proof(AGENT_KEY, "POST", url, token))
    assert _code(answer).startswith("A-AUTH-DPOP"), answer
