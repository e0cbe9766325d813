"""Delegation that narrows: a person's token is exchanged at the gateway's own token endpoint for a
sub-agent's token no wider than its parent, DPoP-bound, whose chain reaches the audit and the policy.

Real parts only: the test issuer mints the person's token, a real HTTP client hits
`POST /oauth/token`, the delegated tokens call the loopback backend over REST, and the audit
records are read back from the gateway's store.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from colonnade.config import DelegationSettings
from colonnade.store.audit_repo import AuditFilter, StoredAudit
from tests.support.dpop import proof
from tests.support.governed import Governed, governed_gateway

EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS = "urn:ietf:params:oauth:token-type:access_token"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"
KEYS = {
    name: ECKey.generate_key("P-256", auto_kid=True) for name in ("planner", "researcher", "writer", "fourth")
}
ALLOWED = {
    "planner": ["acme:items:*", "acme:items:drop_item", "acme:lab:read_item"],
    "researcher": ["acme:items:*", "acme:items:drop_item"],
    "writer": ["acme:items:read_item", "acme:items:write_item", "acme:items:drop_item"],
    "fourth": ["acme:items:read_item"],
}


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    delegation = DelegationSettings(enabled=True, max_depth=3)
    with governed_gateway(tmp_path_factory.mktemp("delegation"), delegation=delegation) as running:
        security = running.token("security", sub="officer")
        with running.rest(security) as client:
            for name, tools in ALLOWED.items():
                body = {
                    "agent_id": name,
                    "allowed_tools": tools,
                    "public_key": KEYS[name].as_dict(private=False),
                }
                assert client.post("/v1/agents", json=body).status_code == 201
            assert (
                client.post(
                    "/v1/agents", json={"agent_id": "keyless", "allowed_tools": ["acme:*"]}
                ).status_code
                == 201
            )
        yield running


def _token_url(governed: Governed) -> str:
    return f"{governed.base_url}/oauth/token"


def _actor_token(governed: Governed, agent: str, **overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "iss": agent,
        "sub": agent,
        "aud": _token_url(governed),
        "iat": now,
        "exp": now + 60,
        "jti": uuid.uuid4().hex,
        **overrides,
    }
    return jwt.encode(
        {"alg": "ES256", "typ": "JWT"}, claims, KEYS.get(agent, KEYS["fourth"]), algorithms=["ES256"]
    )


def _exchange(
    governed: Governed,
    subject: str,
    actor: str,
    *,
    parent_key: ECKey | None = None,
    actor_token: str | None = None,
    **fields: str,
) -> httpx2.Response:
    url = _token_url(governed)
    form = {
        "grant_type": EXCHANGE,
        "subject_token": subject,
        "subject_token_type": ACCESS,
        "actor_token": actor_token or _actor_token(governed, actor),
        "actor_token_type": JWT_TYPE,
        **fields,
    }
    headers = {"DPoP": proof(parent_key, "POST", url, subject)} if parent_key is not None else {}
    return httpx2.post(url, data=form, headers=headers, timeout=30.0)


def _person(governed: Governed, persona: str = "product_owner") -> str:
    return governed.token(persona, sub="alice", team="team-a")


def _chain(governed: Governed, *agents: str, **fields: str) -> str:
    """A delegated token down `agents`: alice to the first, each to the next."""
    token, parent_key = _person(governed), None
    for agent in agents:
        answer = _exchange(governed, token, agent, parent_key=parent_key, **fields)
        assert answer.status_code == 200, answer.text
        token, parent_key = answer.json()["access_token"], KEYS[agent]
    return token


def _call(
    governed: Governed, token: str, agent: str, tool: str, *, key: ECKey | None = None
) -> dict[str, Any]:
    url = f"{governed.base_url}/v1/calls"
    signer = key or KEYS[agent]
    headers = {"Authorization": f"DPoP {token}", "DPoP": proof(signer, "POST", url, token)}
    arguments = {"item_id": "I-1", "value": "v"} if tool.endswith("write_item") else {"item_id": "I-1"}
    response = httpx2.post(url, json={"tool_id": tool, "input": arguments}, headers=headers, timeout=30.0)
    return {"http": response.status_code, **response.json()}


def _code(answer: dict[str, Any]) -> str:
    return "ok" if answer.get("status") == "success" else str(answer["error"]["code"])


def _records(governed: Governed, **filters: Any) -> list[StoredAudit]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    return list(governed.running.run(audit.store.query(AuditFilter(**filters), limit=1000)))


def test_the_token_endpoint_is_advertised_and_its_keys_published(governed: Governed) -> None:
    origin = governed.base_url
    resource = httpx2.get(f"{origin}/.well-known/oauth-protected-resource/mcp").json()
    assert origin in resource["authorization_servers"]
    server = httpx2.get(f"{origin}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == origin and server["token_endpoint"] == f"{origin}/oauth/token"
    assert EXCHANGE in server["grant_types_supported"]
    keys = httpx2.get(server["jwks_uri"]).json()["keys"]
    assert len(keys) == 1 and "d" not in keys[0] and keys[0]["kid"]


def test_a_person_delegates_to_an_agent_that_calls_within_the_narrowed_tools(governed: Governed) -> None:
    answer = _exchange(
        governed, _person(governed), "planner", tools="acme:items:read_item acme:items:write_item"
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (
        body["token_type"] == "DPoP" and body["issued_token_type"] == ACCESS and 0 < body["expires_in"] <= 600
    )
    assert body["colonnade_tools"] == ["acme:items:read_item", "acme:items:write_item"]
    assert body["colonnade_actor_chain"] == ["user:alice", "agent:planner"]
    claims = jwt.decode(
        body["access_token"],
        ECKey.import_key(httpx2.get(f"{governed.base_url}/oauth/jwks").json()["keys"][0]),
    ).claims
    assert claims["sub"] == "alice" and claims["act"] == {"sub": "planner"}
    assert claims["cnf"]["jkt"] == KEYS["planner"].thumbprint() and claims["exp"] - claims["iat"] <= 600
    token, hits = body["access_token"], len(governed.backend_hits())
    assert _code(_call(governed, token, "planner", "acme:items:write_item")) == "ok"
    assert len(governed.backend_hits()) == hits + 1
    # on the planner's own allow-list, but not in the delegated tools: unseen
    assert _code(_call(governed, token, "planner", "acme:lab:read_item")) == "I-REQ-UNKNOWN-TOOL"


def test_a_sub_agent_token_wider_than_its_parent_is_refused_at_issue_time(governed: Governed) -> None:
    planner = _chain(governed, "planner", tools="acme:items:read_item")
    wider = _exchange(governed, planner, "researcher", parent_key=KEYS["planner"], tools="acme:items:*")
    assert wider.status_code == 400
    body = wider.json()
    assert body["error"] == "invalid_target" and body["code"] == "A-AUTH-DELEGATION"
    assert "acme:items:*" in body["error_description"]
    scoped = _exchange(
        governed, planner, "researcher", parent_key=KEYS["planner"], scope="colonnade:security:write"
    )
    assert scoped.status_code == 400 and scoped.json()["error"] == "invalid_scope"
    assert "colonnade:security:write" in scoped.json()["error_description"]
    # wider than the new actor's own registration is refused the same way
    person = _exchange(governed, _person(governed), "fourth", tools="acme:items:write_item")
    assert person.status_code == 400 and person.json()["error"] == "invalid_target"
    refusals = _records(governed, kind="delegation.refuse")
    assert {"invalid_target", "invalid_scope"} <= {record.details["error"] for record in refusals}


def test_a_chain_deeper_than_the_limit_is_refused(governed: Governed) -> None:
    third = _chain(governed, "planner", "researcher", "writer")
    deeper = _exchange(governed, third, "fourth", parent_key=KEYS["writer"])
    assert deeper.status_code == 400 and deeper.json()["code"] == "A-AUTH-DELEGATION"
    assert "max_depth" in deeper.json()["error_description"]


def test_the_actor_must_prove_itself_and_the_parent_its_key(governed: Governed) -> None:
    person = _person(governed)
    forged = jwt.encode(
        {"alg": "ES256"},
        {
            "iss": "planner",
            "sub": "planner",
            "aud": _token_url(governed),
            "iat": int(time.time()),
            "exp": int(time.time()) + 60,
            "jti": uuid.uuid4().hex,
        },
        KEYS["writer"],
        algorithms=["ES256"],
    )
    assert (
        "does not verify"
        in _exchange(governed, person, "planner", actor_token=forged).json()["error_description"]
    )
    keyless = _exchange(governed, person, "keyless", actor_token=_actor_token(governed, "keyless"))
    assert keyless.status_code == 400 and "no registered key" in keyless.json()["error_description"]
    used = _actor_token(governed, "planner")
    assert _exchange(governed, person, "planner", actor_token=used).status_code == 200
    assert (
        "used before" in _exchange(governed, person, "planner", actor_token=used).json()["error_description"]
    )
    planner = _chain(governed, "planner")
    unproven = _exchange(governed, planner, "researcher")  # a bound subject token without its proof
    assert unproven.status_code == 400 and unproven.json()["code"] == "A-AUTH-DPOP-REQUIRED"
    stolen = _exchange(governed, planner, "researcher", parent_key=KEYS["writer"])
    assert stolen.json()["code"] == "A-AUTH-DPOP-INVALID"


def test_a_delegated_token_is_useless_without_the_sub_agents_key_or_once_expired(governed: Governed) -> None:
    token = _chain(governed, "planner", "researcher")
    hits = len(governed.backend_hits())
    url = f"{governed.base_url}/v1/calls"
    body = {"tool_id": "acme:items:read_item", "input": {"item_id": "I-1"}}
    bearer = httpx2.post(url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
    assert bearer.status_code == 401 and bearer.json()["error"]["code"] == "A-AUTH-DPOP-REQUIRED"
    parents = _call(governed, token, "researcher", "acme:items:read_item", key=KEYS["planner"])
    assert parents["http"] == 401 and _code(parents) == "A-AUTH-DPOP-INVALID"
    assert len(governed.backend_hits()) == hits
    signer = governed.running.gateway.governance.delegation_signer
    assert signer is not None
    claims = jwt.decode(token, signer.key).claims
    expired = signer.sign({**claims, "iat": claims["iat"] - 700, "exp": int(time.time()) - 120})
    answer = _call(governed, expired, "researcher", "acme:items:read_item")
    assert answer["http"] == 401 and _code(answer) == "A-AUTH-EXPIRED"
    long_lived = signer.sign({**claims, "exp": claims["iat"] + 3600})
    answer = _call(governed, long_lived, "researcher", "acme:items:read_item")
    assert answer["http"] == 401 and _code(answer) == "A-AUTH-DELEGATION"
    assert len(governed.backend_hits()) == hits


def test_a_depth_three_chain_appears_whole_in_the_audit(governed: Governed) -> None:
    token = _chain(governed, "planner", "researcher", "writer")
    answer = _call(governed, token, "writer", "acme:items:read_item")
    assert _code(answer) == "ok", answer
    calls = [record for record in _records(governed, kind="call") if record.call_id == answer["call_id"]]
    assert len(calls) == 1
    chain = ["user:alice", "agent:planner", "agent:researcher", "agent:writer"]
    assert calls[0].actor == "agent:writer" and calls[0].details["actor_chain"] == chain
    grants = [
        record
        for record in _records(governed, kind="delegation.grant")
        if record.details["actor"] == "writer"
    ]
    assert grants and grants[-1].details["actor_chain"] == chain and grants[-1].details["depth"] == 3


def test_a_chain_never_does_what_its_person_may_not(governed: Governed) -> None:
    developer = _person(governed, "developer")  # developers write non-production APIs only
    answer = _exchange(governed, developer, "planner", tools="acme:items:write_item")
    assert answer.status_code == 200, answer.text
    hits = len(governed.backend_hits())
    refused = _call(governed, answer.json()["access_token"], "planner", "acme:items:write_item")
    assert _code(refused) == "A-AUTH-FORBIDDEN" and "user:alice" in refused["error"]["message"]
    assert len(governed.backend_hits()) == hits
