"""`colonnade serve` over TLS with client certificates, and tokens bound to them (RFC 8705).

A real CA, server and client certificates; the real gateway process; REST and MCP clients
presenting certificate A. A token bound to A works, bound to B or sent without a certificate is
refused with its `A-AUTH-MTLS-*` code and audited, an unbound token works as before, and
`client_cert: required` refuses a handshake without a certificate.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from joserfc.jwk import ECKey
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from colonnade.governance.personas import PERSONA_SCOPES, Persona
from tests.support.certificates import Issued, PrivateCa
from tests.support.dpop import proof
from tests.support.fault_backend import FaultBackend, create_app
from tests.support.issuer import Issuer, running_issuer
from tests.support.loopback import free_port, serve_in_thread, start_process, stop_process
from tests.support.tenant_contracts import tenant_contract

pytestmark = pytest.mark.e2e

COLONNADE = Path(sys.executable).with_name("colonnade")
READ, WRITE = "acme:items:read_item", "acme:items:write_item"


@dataclass
class Served:
    base_url: str
    resource: str
    issuer: Issuer
    ca: PrivateCa
    alice: Issued  # certificate A
    bob: Issued  # certificate B
    env: dict[str, str]
    backend: FaultBackend

    def token(self, bound_to: Issued | None = None, **confirmation: str) -> str:
        scopes = " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN]))
        claims: dict[str, Any] = {"sub": "alice", "persona": "admin", "tenant": "acme", "scope": scopes}
        if bound_to is not None:
            confirmation["x5t#S256"] = bound_to.thumbprint
        if confirmation:
            claims["cnf"] = confirmation
        return self.issuer.mint(claims, audience=self.resource)

    def client(self, cert: Issued | None, token: str | None = None) -> httpx2.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        context = self.ca.client_context(cert)
        return httpx2.Client(base_url=self.base_url, verify=context, headers=headers, timeout=30.0)

    def call(
        self, cert: Issued | None, token: str, dpop: ECKey | None = None, tool: str = READ
    ) -> tuple[int, str]:
        url, headers = f"{self.base_url}/v1/calls", {}
        if dpop is not None:
            headers = {"Authorization": f"DPoP {token}", "DPoP": proof(dpop, "POST", url, token)}
        with self.client(cert, token) as client:
            arguments = (
                {"item_id": "I-1", "value": "v"} if tool.endswith("write_item") else {"item_id": "I-1"}
            )
            body = {"tool_id": tool, "input": arguments}
            answer = client.post("/v1/calls", json=body, headers=headers)
        body = answer.json()
        return answer.status_code, "ok" if body.get("status") == "success" else body["error"]["code"]


@contextmanager
def _serving(tmp: Path, client_cert: str) -> Iterator[Served]:
    ca = PrivateCa(tmp / "pki")
    server, alice, bob = ca.server(), ca.client("alice"), ca.client("bob")
    backend = FaultBackend()
    with running_issuer() as issuer, serve_in_thread(create_app(backend)) as backend_url:
        contract = tmp / "acme-items.yaml"
        document = tenant_contract("acme", "items", backend_url).model_dump(mode="json", exclude_none=True)
        contract.write_text(yaml.safe_dump(document, sort_keys=False))
        port = free_port()
        resource = f"https://127.0.0.1:{port}/mcp"
        config = {
            "data_dir": str(tmp / "data"),
            "contracts": [str(contract)],
            "manifests_dir": None,
            "server": {
                "host": "127.0.0.1",
                "port": port,
                "tls": {
                    "cert_file": str(server.cert_file),
                    "key_file": str(server.key_file),
                    "client_ca_file": str(ca.cert_file),
                    "client_cert": client_cert,
                },
            },
            "auth": {"issuers": [{"issuer": issuer.url, "jwks_url": issuer.jwks_url}]},
        }
        (tmp / "colonnade.yaml").write_text(yaml.safe_dump(config))
        env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
        env["COLONNADE_CONFIG"] = str(tmp / "colonnade.yaml")
        log = tmp / "serve.log"
        proc = start_process([str(COLONNADE), "serve"], log, env=env, cwd=tmp)
        served = Served(f"https://127.0.0.1:{port}", resource, issuer, ca, alice, bob, env, backend)
        try:
            _wait_ready(served, proc, log)
            yield served
        finally:
            stop_process(proc)


def _wait_ready(served: Served, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")[-4000:]
        try:
            with served.client(served.alice) as client:
                if client.get("/readyz").status_code == 200:
                    return
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the TLS gateway did not become ready: " + log.read_text(errors="replace")[-4000:])


@pytest.fixture(scope="module")
def optional(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with _serving(tmp_path_factory.mktemp("mtls-optional"), "optional") as served:
        yield served


def test_the_resource_metadata_announces_certificate_bound_tokens(optional: Served) -> None:
    with optional.client(None) as client:
        document = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == optional.resource
    assert document["tls_client_certificate_bound_access_tokens"] is True


def test_a_token_bound_to_the_presented_certificate_calls(optional: Served) -> None:
    assert optional.call(optional.alice, optional.token(bound_to=optional.alice)) == (200, "ok")


def test_a_token_bound_to_another_certificate_is_refused(optional: Served) -> None:
    token = optional.token(bound_to=optional.bob)
    assert optional.call(optional.alice, token) == (401, "A-AUTH-MTLS-MISMATCH")


def test_a_refused_write_never_reaches_the_backend(optional: Served) -> None:
    effects = len(optional.backend.ledger)
    for cert, bound in ((optional.alice, optional.bob), (None, optional.alice)):
        status, code = optional.call(cert, optional.token(bound_to=bound), tool=WRITE)
        assert status == 401 and code.startswith("A-AUTH-MTLS-")
    assert len(optional.backend.ledger) == effects
    assert optional.call(optional.alice, optional.token(bound_to=optional.alice), tool=WRITE) == (200, "ok")
    assert len(optional.backend.ledger) == effects + 1


def test_a_bound_token_without_a_client_certificate_is_refused(optional: Served) -> None:
    assert optional.call(None, optional.token(bound_to=optional.alice)) == (401, "A-AUTH-MTLS-REQUIRED")


def test_an_unbound_token_works_with_or_without_a_certificate(optional: Served) -> None:
    token = optional.token()
    assert optional.call(optional.alice, token) == (200, "ok")
    assert optional.call(None, token) == (200, "ok")


def test_a_token_bound_to_a_key_and_a_certificate_needs_both(optional: Served) -> None:
    key = ECKey.generate_key("P-256", auto_kid=True)
    token = optional.token(bound_to=optional.alice, jkt=key.thumbprint())
    assert optional.call(optional.alice, token, dpop=key) == (200, "ok")
    assert optional.call(optional.bob, token, dpop=key) == (401, "A-AUTH-MTLS-MISMATCH")
    assert optional.call(None, token, dpop=key) == (401, "A-AUTH-MTLS-REQUIRED")
    assert optional.call(optional.alice, token) == (401, "A-AUTH-DPOP-REQUIRED")
    other = ECKey.generate_key("P-256", auto_kid=True)
    assert optional.call(optional.alice, token, dpop=other) == (401, "A-AUTH-DPOP-INVALID")


def test_refusals_are_audited_with_their_code(optional: Served) -> None:
    optional.call(optional.alice, optional.token(bound_to=optional.bob))
    listed = subprocess.run(
        [str(COLONNADE), "audit", "list", "--kind", "auth.failure", "--json", "--limit", "1000"],
        env=optional.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    records = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    codes = {record.get("code") for record in records}
    assert "A-AUTH-MTLS-MISMATCH" in codes, records


async def test_mcp_with_a_certificate_bound_token(optional: Served) -> None:
    def session(token: str) -> httpx2.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"}
        return httpx2.AsyncClient(
            verify=optional.ca.client_context(optional.alice), headers=headers, timeout=30
        )

    async with (
        session(optional.token(bound_to=optional.alice)) as http,
        Client(streamable_http_client(f"{optional.base_url}/mcp", http_client=http)) as client,  # type: ignore[arg-type]
    ):
        result = await client.call_tool("acme__items__read_item", {"item_id": "I-1"})
        assert result.is_error is False
    async with session(optional.token(bound_to=optional.bob)) as http:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        answer = await http.post(
            f"{optional.base_url}/mcp",
            json=initialize,
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert answer.status_code == 401
    assert "A-AUTH-MTLS-MISMATCH" in answer.text


def test_required_client_certificates_refuse_a_handshake_without_one(tmp_path: Path) -> None:
    with _serving(tmp_path, "required") as served:
        token = served.token()
        assert served.call(served.alice, token) == (200, "ok")
        with pytest.raises((httpx2.TransportError, ssl.SSLError)):
            served.call(None, token)
