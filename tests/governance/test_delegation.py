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

import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from colonnade.config import DelegationSettings
from tests.support.delegation import (
    ACCESS,
    EXCHANGE,
    KEYS,
    DpopAuth,
    actor_token,
    call,
    chain_token,
    code,
    exchange,
    person_token,
    records,
    register_agents,
    token_url,
)
from tests.support.governed import Governed, governed_gateway


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    delegation = DelegationSettings(enabled=True, max_depth=3)
    with governed_gateway(tmp_path_factory.mktemp("delegation"), delegation=delegation) as running:
        register_agents(running)
        yield running


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
    answer = exchange(
        governed, person_token(governed), "planner", tools="acme:items:read_item acme:items:write_item"
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
    assert code(call(governed, token, "planner", "acme:items:write_item")) == "ok"
    assert len(governed.backend_hits()) == hits + 1
    # on the planner's own allow-list, but not in the delegated tools: unseen
    assert code(call(governed, token, "planner", "acme:lab:read_item")) == "I-REQ-UNKNOWN-TOOL"


def test_a_sub_agent_token_wider_than_its_parent_is_refused_at_issue_time(governed: Governed) -> None:
    planner = chain_token(governed, "planner", tools="acme:items:read_item")
    wider = exchange(governed, planner, "researcher", parent_key=KEYS["planner"], tools="acme:items:*")
    assert wider.status_code == 400
    body = wider.json()
    assert body["error"] == "invalid_target" and body["code"] == "A-AUTH-DELEGATION"
    assert "acme:items:*" in body["error_description"]
    scoped = exchange(
        governed, planner, "researcher", parent_key=KEYS["planner"], scope="colonnade:security:write"
    )
    assert scoped.status_code == 400 and scoped.json()["error"] == "invalid_scope"
    assert "colonnade:security:write" in scoped.json()["error_description"]
    # wider than the new actor's own registration is refused the same way
    person = exchange(governed, person_token(governed), "fourth", tools="acme:items:write_item")
    assert person.status_code == 400 and person.json()["error"] == "invalid_target"
    refusals = records(governed, kind="delegation.refuse")
    assert {"invalid_target", "invalid_scope"} <= {record.details["error"] for record in refusals}


def test_a_chain_deeper_than_the_limit_is_refused(governed: Governed) -> None:
    third = chain_token(governed, "planner", "researcher", "writer")
    deeper = exchange(governed, third, "fourth", parent_key=KEYS["writer"])
    assert deeper.status_code == 400 and deeper.json()["code"] == "A-AUTH-DELEGATION"
    assert "max_depth" in deeper.json()["error_description"]


def test_the_actor_must_prove_itself_and_the_parent_its_key(governed: Governed) -> None:
    person = person_token(governed)
    forged = jwt.encode(
        {"alg": "ES256"},
        {
            "iss": "planner",
            "sub": "planner",
            "aud": token_url(governed),
            "iat": int(time.time()),
            "exp": int(time.time()) + 60,
            "jti": uuid.uuid4().hex,
        },
        KEYS["writer"],
        algorithms=["ES256"],
    )
    assert (
        "does not verify"
        in exchange(governed, person, "planner", signed_actor=forged).json()["error_description"]
    )
    keyless = exchange(governed, person, "keyless", signed_actor=actor_token(governed, "keyless"))
    assert keyless.status_code == 400 and "no registered key" in keyless.json()["error_description"]
    used = actor_token(governed, "planner")
    assert exchange(governed, person, "planner", signed_actor=used).status_code == 200
    assert (
        "used before" in exchange(governed, person, "planner", signed_actor=used).json()["error_description"]
    )
    needless = exchange(governed, person, "planner", parent_key=KEYS["planner"])  # RFC 9449's habit
    assert needless.status_code == 400 and "not bound" in needless.json()["error_description"]
    planner = chain_token(governed, "planner")
    unproven = exchange(governed, planner, "researcher")  # a bound subject token without its proof
    assert unproven.status_code == 400 and unproven.json()["code"] == "A-AUTH-DPOP-REQUIRED"
    stolen = exchange(governed, planner, "researcher", parent_key=KEYS["writer"])
    assert stolen.json()["code"] == "A-AUTH-DPOP-INVALID"


def test_a_delegated_token_is_useless_without_the_sub_agents_key_or_once_expired(governed: Governed) -> None:
    token = chain_token(governed, "planner", "researcher")
    hits = len(governed.backend_hits())
    url = f"{governed.base_url}/v1/calls"
    body = {"tool_id": "acme:items:read_item", "input": {"item_id": "I-1"}}
    bearer = httpx2.post(url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
    assert bearer.status_code == 401 and bearer.json()["error"]["code"] == "A-AUTH-DPOP-REQUIRED"
    parents = call(governed, token, "researcher", "acme:items:read_item", key=KEYS["planner"])
    assert parents["http"] == 401 and code(parents) == "A-AUTH-DPOP-INVALID"
    assert len(governed.backend_hits()) == hits
    signer = governed.running.gateway.governance.delegation_signer
    assert signer is not None
    claims = jwt.decode(token, signer.key).claims
    expired = signer.sign({**claims, "iat": claims["iat"] - 700, "exp": int(time.time()) - 120})
    answer = call(governed, expired, "researcher", "acme:items:read_item")
    assert answer["http"] == 401 and code(answer) == "A-AUTH-EXPIRED"
    unbound = signer.sign({name: value for name, value in claims.items() if name != "cnf"})
    plain = httpx2.post(url, json=body, headers={"Authorization": f"Bearer {unbound}"}, timeout=30.0)
    assert plain.status_code == 401 and plain.json()["error"]["code"] == "A-AUTH-DELEGATION"
    long_lived = signer.sign({**claims, "exp": claims["iat"] + 3600})
    answer = call(governed, long_lived, "researcher", "acme:items:read_item")
    assert answer["http"] == 401 and code(answer) == "A-AUTH-DELEGATION"
    assert len(governed.backend_hits()) == hits


def test_a_depth_three_chain_appears_whole_in_the_audit(governed: Governed) -> None:
    token = chain_token(governed, "planner", "researcher", "writer")
    answer = call(governed, token, "writer", "acme:items:read_item")
    assert code(answer) == "ok", answer
    calls = [record for record in records(governed, kind="call") if record.call_id == answer["call_id"]]
    assert len(calls) == 1
    chain = ["user:alice", "agent:planner", "agent:researcher", "agent:writer"]
    assert calls[0].actor == "agent:writer" and calls[0].details["actor_chain"] == chain
    grants = [
        record for record in records(governed, kind="delegation.grant") if record.details["actor"] == "writer"
    ]
    assert grants and grants[-1].details["actor_chain"] == chain and grants[-1].details["depth"] == 3


def test_a_chain_never_does_what_its_person_may_not(governed: Governed) -> None:
    developer = person_token(governed, "developer")  # developers write non-production APIs only
    answer = exchange(governed, developer, "planner", tools="acme:items:write_item")
    assert answer.status_code == 200, answer.text
    hits = len(governed.backend_hits())
    refused = call(governed, answer.json()["access_token"], "planner", "acme:items:write_item")
    assert code(refused) == "A-AUTH-FORBIDDEN" and "user:alice" in refused["error"]["message"]
    assert len(governed.backend_hits()) == hits


async def test_an_mcp_client_calls_with_a_depth_two_token_and_sees_only_the_narrowed_tools(
    governed: Governed,
) -> None:
    status, _ = governed.call(person_token(governed), "acme:items:write_item", item_id="I-3", value="v")
    assert status == 200
    token = chain_token(governed, "planner", "researcher", tools="acme:items:read_item")
    hits = len(governed.backend_hits())
    auth = DpopAuth(token, KEYS["researcher"])
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30.0) as http,
        Client(streamable_http_client(governed.mcp_url, http_client=http)) as client,
    ):
        listed = {tool.name for tool in (await client.list_tools()).tools}
        read = await client.call_tool("acme__items__read_item", {"item_id": "I-3"})
        write = await client.call_tool("acme__items__write_item", {"item_id": "I-3", "value": "v"})
    assert "acme__items__read_item" in listed and "acme__items__write_item" not in listed
    assert not read.is_error, read
    assert write.is_error and "I-REQ-UNKNOWN-TOOL" in str(write.content[0])
    assert len(governed.backend_hits()) == hits + 1
    chain = ["user:alice", "agent:planner", "agent:researcher"]
    reads = records(governed, kind="call", tool="acme:items:read_item", actor="agent:researcher")
    assert any(r.outcome == "success" and r.details.get("actor_chain") == chain for r in reads)


def test_malformed_token_requests_get_a_clear_oauth_error(governed: Governed) -> None:
    url = token_url(governed)
    as_json = httpx2.post(url, json={"grant_type": EXCHANGE}, timeout=30.0)
    assert as_json.status_code == 400 and "x-www-form-urlencoded" in as_json.json()["error_description"]
    twice = httpx2.post(
        url,
        content=f"grant_type={EXCHANGE}&scope=a&scope=b",
        timeout=30.0,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert twice.status_code == 400 and "'scope' is given more than once" in twice.json()["error_description"]
    other = httpx2.post(url, data={"grant_type": "client_credentials"}, timeout=30.0)
    assert other.json()["error"] == "unsupported_grant_type"
    bare = httpx2.post(url, data={"grant_type": EXCHANGE}, timeout=30.0)
    assert bare.json()["error"] == "invalid_request" and "subject_token" in bare.json()["error_description"]
    no_actor = httpx2.post(
        url,
        data={"grant_type": EXCHANGE, "subject_token": person_token(governed), "subject_token_type": ACCESS},
        timeout=30.0,
    )
    assert "actor_token" in no_actor.json()["error_description"]
    assert no_actor.headers["cache-control"] == "no-store"
