"""Authentication at the HTTP edge: every route but the probes and the resource metadata needs a
credential; forged, expired, unsigned, wrong-audience and wrong-issuer tokens are refused with
their code and a challenge, audited, and never reach the pipeline or the backend; the official
MCP client discovers the issuer and gets a token by itself (client credentials, no human)."""

from __future__ import annotations

import time

import httpx2
import pytest
from joserfc.jwk import RSAKey
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from colonnade.governance.audit import verify_chain
from colonnade.store.audit_repo import AuditFilter
from tests.support.governed import Governed

ROUTES = [
    ("POST", "/mcp"),
    ("GET", "/v1/tools"),
    ("POST", "/v1/calls"),
    ("GET", "/v1/tools/acme:items:read_item"),
    ("GET", "/metrics"),
    ("GET", "/v1/keys"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_refuses_a_request_without_credentials(
    governed: Governed, method: str, path: str
) -> None:
    with governed.rest(None) as client:
        response = client.request(method, path, json={"tool_id": "acme:items:read_item"})
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
    assert f"{governed.base_url}/.well-known/oauth-protected-resource/mcp" in challenge
    assert "A-AUTH-MISSING" in response.text


def test_a_page_without_credentials_redirects_to_the_login_page(governed: Governed) -> None:
    with governed.rest(None) as client:
        response = client.get("/ui/catalog")
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/login?next=%2Fui%2Fcatalog"


def test_probes_and_resource_metadata_stay_open(governed: Governed) -> None:
    with governed.rest(None) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            document = client.get(path).json()
            assert document["resource"] == governed.resource
            assert document["authorization_servers"] == [governed.issuer.url]
            assert "colonnade:catalog:read" in document["scopes_supported"]


def _forgeries(governed: Governed) -> dict[str, str]:
    now = time.time()
    claims = {"sub": "mallory", "persona": "admin", "tenant": "acme", "scope": "colonnade:catalog:read"}
    head, body, _ = governed.token("admin").split(".")
    stranger = RSAKey.generate_key(2048, auto_kid=True)
    return {
        "A-AUTH-SIGNATURE": f"{head}.{body}.{'A' * 342}",
        "A-AUTH-SIGNING-KEY": governed.issuer.mint(claims, audience=governed.resource, key=stranger),
        "A-AUTH-ALGORITHM": "eyJhbGciOiJub25lIn0." + body + ".",
        "A-AUTH-EXPIRED": governed.issuer.mint(claims, audience=governed.resource, issued_at=now - 3600),
        "A-AUTH-AUDIENCE": governed.issuer.mint(claims, audience="http://127.0.0.1:1/mcp"),
        "A-AUTH-ISSUER": governed.issuer.mint(
            {**claims, "iss": "https://other.example"}, audience=governed.resource
        ),
        "A-AUTH-API-KEY": "col_aaaaaaaaaaaa_" + "b" * 43,
        "A-AUTH-MALFORMED": "hello",
    }


async def test_forged_tokens_are_refused_audited_and_never_executed(governed: Governed) -> None:
    hits, effects = len(governed.backend_hits()), len(governed.effects())
    for code, token in _forgeries(governed).items():
        status, result = governed.call(token, "acme:items:write_item", item_id="I-1", value="forged")
        assert status == 401 and result["error"]["code"] == code, (code, result)
        assert result["error"]["fix"]
        with governed.rest(token) as client:
            response = client.post(
                "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"accept": "application/json, text/event-stream"},
            )
        assert response.status_code == 401 and code in response.text
        assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert len(governed.backend_hits()) == hits and len(governed.effects()) == effects
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    failures = governed.running.run(audit.store.query(AuditFilter(kind="auth.failure"), limit=500))
    codes = {record.code for record in failures}
    assert set(_forgeries(governed)) <= codes
    assert all(record.decision == "deny" and record.outcome == "refused" for record in failures)
    calls = governed.running.run(
        audit.store.query(AuditFilter(kind="call", tool="acme:items:write_item"), limit=500)
    )
    assert not [record for record in calls if record.actor == "user:mallory"]
    assert (governed.running.run(verify_chain(audit.store))).ok


def test_a_missing_scope_is_403_with_insufficient_scope(governed: Governed) -> None:
    token = governed.token("consumer")  # consumers do not read metrics
    with governed.rest(token) as client:
        response = client.get("/metrics")
        assert response.status_code == 403
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
        assert 'scope="colonnade:metrics:read"' in response.headers["www-authenticate"]
        assert client.get("/ui/metrics").status_code == 403
    with governed.rest(governed.token("security")) as client:
        assert client.get("/metrics").status_code == 200


def test_tokens_without_persona_or_tenant_are_refused(governed: Governed) -> None:
    plain = governed.issuer.mint({"sub": "x"}, audience=governed.resource)
    tenantless = governed.token("developer", tenant=None)
    for token in (plain, tenantless):
        status, result = governed.call(token, "acme:items:read_item", item_id="I-1")
        assert status == 401 and result["error"]["code"] == "A-AUTH-CLAIMS"


class _Memory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_client_authenticates_on_its_own(governed: Governed, mode: str) -> None:
    """401 -> WWW-Authenticate -> resource metadata -> issuer metadata -> client_credentials -> retry."""
    governed.issuer.add_client(
        "ci-agent",
        "s3cret-s3cret",
        {
            "sub": "ci",
            "persona": "admin",
            "tenant": "acme",
            "scope": "colonnade:catalog:read colonnade:catalog:write",
        },
    )
    storage = _Memory()
    provider = ClientCredentialsOAuthProvider(
        governed.mcp_url, storage, "ci-agent", "s3cret-s3cret", issuer=governed.issuer.url
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30.0) as http,
        Client(streamable_http_client(governed.mcp_url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        listed = await client.list_tools(cache_mode="bypass")
        assert any(
            (t.meta or {}).get("colonnade/canonical_name", "").startswith("acme:") for t in listed.tools
        )
        result = await client.call_tool("acme__items__read_item", {"item_id": "I-1"})
        assert result.is_error is False
    assert storage.tokens is not None  # the token came from the issuer, found by discovery


@pytest.mark.parametrize(
    ("authorization", "said"),
    [
        # the docs' own example key (docs/cli.md), copied with its "..."
        ("Bearer col_3f9a0c1b2d4e_...", "in the key sent the secret has 3 characters, 3 of them outside"),
        ("Bearer col_ABC_" + "x" * 43, "the id is not 12 characters of a-z and 0-9 (3 before"),
        ("Bearer wrongtoken", "the credential sent (10 characters, 0 dots) is neither a JWT"),
        ("Basic d3Jvbmc=", "the Authorization scheme 'basic' is not accepted"),
    ],
)
def test_a_wrong_credential_is_told_what_was_wrong_with_it(
    governed: Governed, authorization: str, said: str
) -> None:
    """Not "send Authorization: Bearer <token>" to a request that did: what is wrong with what it sent."""
    with httpx2.Client(base_url=governed.base_url, timeout=30.0) as client:
        response = client.get("/v1/tools", headers={"authorization": authorization})
    assert response.status_code == 401, response.text
    error = response.json()["error"]
    assert error["code"] == "A-AUTH-MALFORMED" and said in error["message"], error["message"]
    secret_part = authorization.split(" ", 1)[1]
    assert secret_part not in error["message"]  # nothing sent is echoed back
