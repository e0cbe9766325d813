"""A gateway whose backend and MCP server act with each user's own upstream account (mode user_oauth).

The provider (`user_oauth_server.py`, Authlib) runs as its own process; the gateway is its
confidential client with redirect `<gateway>/ui/connections/callback`. The HTTP backend verifies
every bearer token against the provider's JWKS for its own audience and answers with its `sub`, so
a test sees which upstream account a call reached it as; the MCP server (the fault server over
Streamable HTTP, same provider) answers its `authorization` tool with the header it received.
People log in with API keys (revocable).
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
    McpServerSettings,
    ServerSettings,
    Settings,
    UserOAuthProvider,
)
from colonnade.governance.key_admin import KeyRequest
from colonnade.governance.principal import Principal
from tests.support.exchange_rig import contract, verify
from tests.support.loopback import free_port, serve_in_thread, start_process, stop_process, wait_http
from tests.support.mcp_servers import ROOT, fault_http
from tests.surfaces.rest_harness import RunningGateway, serve_gateway

__all__ = [
    "AUDIENCE",
    "CLIENT_ID",
    "CLIENT_SECRET",
    "PROVIDER",
    "UserOAuthRig",
    "provider_process",
    "user_oauth_rig",
]

CLIENT_ID, CLIENT_SECRET = "colonnade-crm", "crm-client-secret"
SECRET_NAME = "CRM_OAUTH_CLIENT"
AUDIENCE = "urn:backend:crm-users"
PROVIDER = "crm"


@dataclass
class UserOAuthRig:
    running: RunningGateway
    provider_url: str
    base_url: str
    keys: KeySet
    hits: list[dict[str, Any]] = field(default_factory=list)

    def key(self, owner: str) -> tuple[str, str]:
        """(key id, whole key) of a new admin API key of tenant acme acting as user:<owner>."""
        admin = self.running.gateway.governance.key_admin
        assert admin is not None
        request = KeyRequest(owner=owner, persona="admin", tenant="acme")
        issued = self.running.run(admin.create(Principal.system("test"), request))
        return issued.record.id, issued.token

    def revoke(self, key_id: str) -> None:
        admin = self.running.gateway.governance.key_admin
        assert admin is not None
        self.running.run(admin.revoke(Principal.system("test"), key_id))

    def call(self, key: str, tool: str = "acme:crm:whoami") -> dict[str, Any]:
        answer = self.running.client.post(
            "/v1/calls", json={"tool_id": tool, "input": {}}, headers={"X-API-Key": key}
        )
        return dict(answer.json())

    def stats(self) -> dict[str, Any]:
        return dict(httpx2.get(f"{self.provider_url}/stats").json())

    def access_ttl(self, seconds: int) -> None:
        httpx2.post(f"{self.provider_url}/config", json={"access_ttl_s": seconds}).raise_for_status()


def _backend(keys: KeySet, hits: list[dict[str, Any]]) -> Starlette:
    async def whoami(request: Request) -> JSONResponse:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        try:
            claims = verify(token, keys, AUDIENCE) if scheme == "Bearer" else None
        except (JoseError, ValueError):
            claims = None
        hits.append({"claims": claims, "token": token})
        if claims is None:
            return JSONResponse({"error": "invalid token"}, status_code=401)
        return JSONResponse({"sub": claims["sub"], "act": None, "aud": claims["aud"]})

    return Starlette(routes=[Route("/whoami", whoami)])


@contextlib.contextmanager
def provider_process(log: Path, redirect: str) -> Iterator[str]:
    port = free_port()
    script = ROOT / "tests" / "support" / "user_oauth_server.py"
    command = [
        sys.executable,
        str(script),
        "--port",
        str(port),
        "--client",
        f"{CLIENT_ID}:{CLIENT_SECRET}",
        "--redirect",
        redirect,
        "--audience",
        AUDIENCE,
    ]
    process = start_process(command, log, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/jwks", process, log=log)
        yield url
    finally:
        stop_process(process)


@contextlib.contextmanager
def user_oauth_rig(tmp: Path, monkeypatch: Any) -> Iterator[UserOAuthRig]:
    monkeypatch.setenv(f"COLONNADE_SECRET_{SECRET_NAME}", CLIENT_SECRET)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    hits: list[dict[str, Any]] = []
    with provider_process(tmp / "provider.log", f"{base_url}/ui/connections/callback") as provider_url:
        keys = KeySet.import_key_set(httpx2.get(f"{provider_url}/jwks").json())
        mcp_process, mcp_url = fault_http(tmp / "mcp.log")
        with contextlib.ExitStack() as stack:
            stack.callback(stop_process, mcp_process)
            backend_url = stack.enter_context(serve_in_thread(_backend(keys, hits)))
            contracts = tmp / "contracts"
            contracts.mkdir()
            document = contract("crm", backend_url, {"mode": "user_oauth", "provider": PROVIDER})
            (contracts / "crm.yaml").write_text(yaml.safe_dump(document))
            provider = UserOAuthProvider(
                display_name="Acme CRM",
                authorization_endpoint=f"{provider_url}/authorize",
                token_endpoint=f"{provider_url}/token",
                revocation_endpoint=f"{provider_url}/revoke",
                client_id=CLIENT_ID,
                client_secret=SECRET_NAME,
                scopes=["crm.read"],
            )
            server = McpServerSettings.model_validate(
                {
                    "name": "faults",
                    "tenant": "acme",
                    "transport": "http",
                    "url": mcp_url,
                    "auth": {"mode": "user_oauth", "provider": PROVIDER},
                }
            )
            settings = Settings(
                data_dir=tmp / "data",
                contracts=sorted(contracts.glob("*.yaml")),
                manifests_dir=None,
                server=ServerSettings(host="127.0.0.1", port=port),
                auth=AuthSettings(enabled=True, resource=f"{base_url}/mcp"),
                upstream_oauth={PROVIDER: provider},
                servers=[server],
                # The fault server's `authorization` tool answers with the header it was sent, which the
                # default guardrails would redact as a secret: the test verifies it.
                guardrails=GuardrailSettings(
                    rules=[
                        GuardrailRuleSettings(tools="acme:faults:authorization", results={"secret": "audit"})
                    ]
                ),
            )
            with serve_gateway(settings) as running:
                yield UserOAuthRig(running, provider_url, base_url, keys, hits)
