"""A gateway whose upstreams act for the caller: a real token-exchange AS, a backend and an MCP server.

The authorization server (`exchange_server.py`, Authlib) runs as its own process and issues the
users' tokens; the gateway trusts it as an issuer and exchanges at it. The HTTP backend verifies
every bearer token against the AS's JWKS for its own audience and answers with the token's claims;
the MCP server (the fault server over Streamable HTTP) answers its `authorization` tool with the
header it received, which the test verifies the same way.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import yaml
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from colonnade.config import (
    AuthSettings,
    GuardrailRuleSettings,
    GuardrailSettings,
    IssuerSettings,
    McpServerSettings,
    ServerSettings,
    Settings,
    TokenExchangeSettings,
)
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from tests.support.loopback import free_port, serve_in_thread, start_process, stop_process, wait_http
from tests.support.mcp_servers import ROOT, fault_http
from tests.surfaces.rest_harness import RunningGateway, serve_gateway

__all__ = ["BACKEND_AUDIENCE", "CLIENT_ID", "MCP_AUDIENCE", "Rig", "contract", "exchange_rig", "verify"]

CLIENT_ID, CLIENT_SECRET = "colonnade-gateway", "gateway-client-secret"
SECRET_NAME = "EXCHANGE_CLIENT"
BACKEND_AUDIENCE, MCP_AUDIENCE = "urn:backend:crm", "urn:mcp:faults"


@contextlib.contextmanager
def authorization_server(log: Path) -> Iterator[str]:
    port = free_port()
    script = ROOT / "tests" / "support" / "exchange_server.py"
    process = start_process(
        [sys.executable, str(script), "--port", str(port), "--client", f"{CLIENT_ID}:{CLIENT_SECRET}"],
        log,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/jwks", process, log=log)
        yield url
    finally:
        stop_process(process)


def verify(token: str, keys: KeySet, audience: str) -> dict[str, Any]:
    """The claims of a token the AS signed for `audience` (what an upstream checks)."""
    claims = dict(jwt.decode(token, keys, algorithms=["RS256"]).claims)
    jwt.JWTClaimsRegistry(aud={"essential": True, "value": audience}, exp={"essential": True}).validate(
        claims
    )
    return claims


def backend_app(keys: KeySet, hits: list[dict[str, Any]]) -> Starlette:
    async def whoami(request: Request) -> JSONResponse:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        try:
            claims = verify(token, keys, BACKEND_AUDIENCE) if scheme == "Bearer" else None
        except (JoseError, ValueError):
            claims = None
        hits.append({"claims": claims})
        if claims is None:
            return JSONResponse({"error": "invalid token"}, status_code=401)
        return JSONResponse({"sub": claims["sub"], "act": claims.get("act"), "aud": claims["aud"]})

    return Starlette(routes=[Route("/whoami", whoami)])


def contract(name: str, base_url: str, auth: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "version": "1.0.0",
        "tenant": "acme",
        "display_name": name,
        "description": "Who the backend sees calling, for upstream credential tests.",
        "status": "published",
        "owner": "team-a",
        "backend": {"base_url": base_url, "auth": auth},
        "endpoints": [
            {
                "path": "/whoami",
                "methods": ["GET"],
                "operation_id": "whoami",
                "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
                "llm": {
                    "summary": "Who the backend sees calling",
                    "intent": "Use in tests to see the upstream subject",
                    "tool_name": "whoami",
                    "side_effects": "read",
                    "safe_for_agents": True,
                    "requires_human_approval": False,
                    "examples": [],
                },
            }
        ],
    }


@dataclass
class Rig:
    running: RunningGateway
    as_url: str
    resource: str
    keys: KeySet
    hits: list[dict[str, Any]] = field(default_factory=list)

    def token(self, sub: str = "alice", *, audience: list[str] | None = None, ttl_s: int = 300) -> str:
        """A user's access token from the AS, for the gateway (and any extra audiences)."""
        claims = {
            "sub": sub,
            "aud": [self.resource, *(audience or [])],
            "persona": Persona.ADMIN.value,
            "tenant": "acme",
            "scope": " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN] | {"crm.read", "crm.write"})),
        }
        answer = httpx2.post(f"{self.as_url}/mint", json={"claims": claims, "ttl_s": ttl_s})
        return str(answer.json()["token"])

    def agent_token(self, sub: str, agent_id: str) -> str:
        """An agent's token acting for user `sub` (its registration must exist at the gateway)."""
        claims = {
            "sub": sub,
            "aud": [self.resource],
            "agent_id": agent_id,
            "persona": Persona.AGENT.value,
            "tenant": "acme",
        }
        answer = httpx2.post(f"{self.as_url}/mint", json={"claims": claims, "ttl_s": 300})
        return str(answer.json()["token"])

    def exchanges(self) -> int:
        return int(httpx2.get(f"{self.as_url}/stats").json()["exchanges"])

    def call(self, token: str, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = self.running.client.post(
            "/v1/calls",
            json={"tool_id": tool, "input": arguments},
            headers={"Authorization": f"Bearer {token}"},
        )
        return dict(answer.json())


@contextlib.contextmanager
def exchange_rig(tmp: Path, monkeypatch: Any) -> Iterator[Rig]:
    monkeypatch.setenv(f"COLONNADE_SECRET_{SECRET_NAME}", CLIENT_SECRET)
    hits: list[dict[str, Any]] = []
    with authorization_server(tmp / "as.log") as as_url:
        keys = KeySet.import_key_set(httpx2.get(f"{as_url}/jwks").json())
        mcp_process, mcp_url = fault_http(tmp / "mcp.log")
        try:
            with serve_in_thread(backend_app(keys, hits)) as backend_url:
                contracts = tmp / "contracts"
                contracts.mkdir()
                exchange = {"mode": "exchange", "audience": BACKEND_AUDIENCE, "scopes": ["crm.read"]}
                forward = {"mode": "forward", "audience": BACKEND_AUDIENCE}
                as_agent = {**exchange, "actor": "agent"}
                for name, auth in (("crm", exchange), ("crmfwd", forward), ("crmagent", as_agent)):
                    document = contract(name, backend_url, auth)
                    (contracts / f"{name}.yaml").write_text(yaml.safe_dump(document))
                port = free_port()
                resource = f"http://127.0.0.1:{port}/mcp"
                server = McpServerSettings.model_validate(
                    {
                        "name": "faults",
                        "tenant": "acme",
                        "transport": "http",
                        "url": mcp_url,
                        "auth": {"mode": "exchange", "audience": MCP_AUDIENCE},
                    }
                )
                settings = Settings(
                    data_dir=tmp / "data",
                    contracts=sorted(contracts.glob("*.yaml")),
                    manifests_dir=None,
                    server=ServerSettings(host="127.0.0.1", port=port),
                    auth=AuthSettings(
                        issuers=[
                            IssuerSettings(issuer=as_url, jwks_url=f"{as_url}/jwks", algorithms=["RS256"])
                        ],
                        resource=resource,
                    ),
                    servers=[server],
                    token_exchange=TokenExchangeSettings(
                        token_endpoint=f"{as_url}/token", client_id=CLIENT_ID, client_secret=SECRET_NAME
                    ),
                    # The fault server's `authorization` tool answers with the token it was sent, which
                    # the default guardrails would redact as a secret: the test reads it.
                    guardrails=GuardrailSettings(
                        rules=[
                            GuardrailRuleSettings(
                                tools="acme:faults:authorization", results={"secret": "audit"}
                            )
                        ]
                    ),
                )
                with serve_gateway(settings) as running:
                    yield Rig(running, as_url, resource, keys, hits)
        finally:
            stop_process(mcp_process)
