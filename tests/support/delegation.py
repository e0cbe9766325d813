"""Delegation for tests: registered agents with keys, RFC 8693 exchanges at the gateway's token
endpoint, and calls with the delegated tokens (each with a fresh DPoP proof of the right key)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx2
from joserfc import jwt
from joserfc.jwk import ECKey

from colonnade.calls.envelope import ENVELOPE_VERSION_HEADER
from colonnade.store.audit_repo import AuditFilter, StoredAudit
from tests.support.dpop import proof
from tests.support.governed import Governed

__all__ = [
    "ACCESS",
    "ALLOWED",
    "EXCHANGE",
    "JWT_TYPE",
    "KEYS",
    "DpopAuth",
    "actor_token",
    "call",
    "chain_token",
    "code",
    "exchange",
    "person_token",
    "records",
    "register_agents",
    "token_url",
]

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


class DpopAuth(httpx2.Auth):
    """Sends a bound token as `DPoP <token>` with a fresh proof of `key` on every request (as the MCP
    SDK's client needs: it makes several requests per session)."""

    def __init__(self, token: str, key: ECKey) -> None:
        self.token, self.key = token, key

    def auth_flow(self, request: httpx2.Request) -> Any:
        url = str(request.url.copy_with(query=None, fragment=None))
        request.headers["Authorization"] = f"DPoP {self.token}"
        request.headers["DPoP"] = proof(self.key, request.method, url, self.token)
        yield request


def register_agents(governed: Governed) -> None:
    """The agents of ALLOWED with their keys, and `keyless` (no registered key)."""
    security = governed.token("security", sub="officer")
    with governed.rest(security) as client:
        for name, tools in ALLOWED.items():
            body = {"agent_id": name, "allowed_tools": tools, "public_key": KEYS[name].as_dict(private=False)}
            assert client.post("/v1/agents", json=body).status_code == 201
        keyless = {"agent_id": "keyless", "allowed_tools": ["acme:*"]}
        assert client.post("/v1/agents", json=keyless).status_code == 201


def token_url(governed: Governed) -> str:
    return f"{governed.base_url}/oauth/token"


def actor_token(governed: Governed, agent: str, **overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "iss": agent,
        "sub": agent,
        "aud": token_url(governed),
        "iat": now,
        "exp": now + 60,
        "jti": uuid.uuid4().hex,
        **overrides,
    }
    return jwt.encode(
        {"alg": "ES256", "typ": "JWT"}, claims, KEYS.get(agent, KEYS["fourth"]), algorithms=["ES256"]
    )


def exchange(
    governed: Governed,
    subject: str,
    actor: str,
    *,
    parent_key: ECKey | None = None,
    signed_actor: str | None = None,
    **fields: str,
) -> httpx2.Response:
    url = token_url(governed)
    form = {
        "grant_type": EXCHANGE,
        "subject_token": subject,
        "subject_token_type": ACCESS,
        "actor_token": signed_actor or actor_token(governed, actor),
        "actor_token_type": JWT_TYPE,
        **fields,
    }
    headers = {"DPoP": proof(parent_key, "POST", url, subject)} if parent_key is not None else {}
    return httpx2.post(url, data=form, headers=headers, timeout=30.0)


def person_token(governed: Governed, persona: str = "product_owner") -> str:
    return governed.token(persona, sub="alice", team="team-a")


def chain_token(governed: Governed, *agents: str, **fields: str) -> str:
    """A delegated token down `agents`: alice to the first, each to the next."""
    token, parent_key = person_token(governed), None
    for agent in agents:
        answer = exchange(governed, token, agent, parent_key=parent_key, **fields)
        assert answer.status_code == 200, answer.text
        token, parent_key = answer.json()["access_token"], KEYS[agent]
    return token


def call(
    governed: Governed,
    token: str,
    agent: str,
    tool: str,
    *,
    key: ECKey | None = None,
    item_id: str = "I-1",
    approval: str | None = None,
) -> dict[str, Any]:
    """POST /v1/calls with a delegated token and a fresh proof of `agent`'s key (or `key`)."""
    url = f"{governed.base_url}/v1/calls"
    signer = key or KEYS[agent]
    headers = {
        "Authorization": f"DPoP {token}",
        "DPoP": proof(signer, "POST", url, token),
        ENVELOPE_VERSION_HEADER: "2",  # the tests read `pending`, which version 1 folds into an error
    }
    if approval is not None:
        headers["Colonnade-Approval-Token"] = approval
    arguments: dict[str, Any] = {"item_id": item_id}
    if tool.endswith("write_item"):
        arguments["value"] = "v"
    response = httpx2.post(url, json={"tool_id": tool, "input": arguments}, headers=headers, timeout=30.0)
    return {"http": response.status_code, **response.json()}


def code(answer: dict[str, Any]) -> str:
    return "ok" if answer.get("status") == "success" else str(answer["error"]["code"])


def records(governed: Governed, **filters: Any) -> list[StoredAudit]:
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    return list(governed.running.run(audit.store.query(AuditFilter(**filters), limit=1000)))
