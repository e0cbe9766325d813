"""Logging in to the pages of a governed gateway: the form, the session cookie, CSRF, logout.

Plain HTTP against a real gateway on loopback (issuer, store, backend); the browser test in
`tests/e2e/test_pages_browser.py` drives the same forms in Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from colonnade.governance.personas import Scope
from colonnade.store.audit_repo import AuditFilter
from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import csrf_token, form_token, log_in, page_client

UNKNOWN_KEY = "col_0123456789ab_" + "x" * 43


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("pages-login")) as running:
        yield running


def _session_cookie_header(response_headers: list[str]) -> str:
    found = [value for value in response_headers if value.startswith("colonnade_session=")]
    assert len(found) == 1, response_headers
    return found[0]


def test_a_page_without_a_login_redirects_to_the_login_form_and_back(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        response = client.get("/ui/tools/acme:items:get_item", params={"x": "1"})
        assert response.status_code == 303
        target = urlsplit(response.headers["location"])
        assert target.path == "/ui/login"
        assert parse_qs(target.query)["next"] == ["/ui/tools/acme:items:get_item?x=1"]
        done = log_in(client, governed.token("admin"), "/ui/tools/acme:items:get_item?x=1")
    assert done.status_code == 303 and done.headers["location"] == "/ui/tools/acme:items:get_item?x=1"


def test_rest_and_mcp_keep_401_with_the_challenge(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        for path in ("/v1/tools", "/metrics"):
            response = client.get(path)
            assert response.status_code == 401, path
            assert "resource_metadata" in response.headers["www-authenticate"]


def test_the_session_cookie_opens_pages_and_nothing_else(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        done = log_in(client, governed.token("admin", sub="alice"))
        assert done.status_code == 303 and done.headers["location"] == "/ui/catalog"
        cookie = _session_cookie_header(done.headers.get_list("set-cookie"))
        attributes = {part.strip().lower() for part in cookie.split(";")}
        assert {"httponly", "samesite=strict", "path=/ui"} <= attributes
        assert "max-age=1800" in attributes and "secure" not in attributes  # plain http on loopback
        catalog = client.get("/ui/catalog")
        assert catalog.status_code == 200
        assert 'id="visitor">user:alice<' in catalog.text and 'id="logout"' in catalog.text
        session = client.cookies["colonnade_session"]
    # The same cookie sent to REST, MCP or /metrics is no credential there.
    with page_client(governed.base_url) as bare:
        headers = {"cookie": f"colonnade_session={session}"}
        assert bare.get("/v1/tools", headers=headers).status_code == 401
        assert bare.get("/metrics", headers=headers).status_code == 401
        mcp = bare.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert mcp.status_code == 401
        assert bare.get("/ui/catalog", headers=headers).status_code == 200


def test_a_wrong_key_shows_why_and_opens_no_session(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        forged = governed.token("admin")[:-4] + "AAAA"
        for credential, status, says in (
            (UNKNOWN_KEY, 401, "(A-AUTH-API-KEY)"),
            ("col_nope", 401, "(A-AUTH-MALFORMED)"),
            (forged, 401, "(A-AUTH-"),
            ("not a key", 400, "A-AUTH-MALFORMED"),
            ("", 400, "Paste an API key"),
        ):
            response = log_in(client, credential)
            assert response.status_code == status, (credential, response.text)
            assert 'id="error"' in response.text and says in response.text
            assert "colonnade_session" not in response.headers.get("set-cookie", "")
        assert client.get("/ui/catalog").status_code == 303


def test_a_credential_without_catalog_read_cannot_log_in(governed: Governed) -> None:
    token = governed.token("admin", scopes=frozenset({Scope.METRICS_READ}))
    with page_client(governed.base_url) as client:
        response = log_in(client, token)
    assert response.status_code == 403
    assert "colonnade:catalog:read" in response.text and "(A-AUTH-SCOPE)" in response.text


def test_a_login_post_without_the_forms_token_is_refused(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        client.get("/ui/login")
        fields = {"credential": governed.token("admin"), "login_token": "forged", "next": "/ui/catalog"}
        response = client.post("/ui/login", data=fields)
        assert response.status_code == 403 and "A-AUTH-CSRF" in response.text
        assert client.get("/ui/catalog").status_code == 303


def test_next_never_leads_to_another_site(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        for target in ("//evil.example/x", "https://evil.example/", "/\\evil.example", "/v1/tools"):
            response = log_in(client, governed.token("admin"), target)
            assert response.headers["location"] == "/ui/catalog", target


def test_logout_needs_the_sessions_token_and_ends_the_session(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        log_in(client, governed.token("admin"))
        page = client.get("/ui/catalog").text
        forged = client.post("/ui/logout", data={"csrf_token": "guessed"})
        assert forged.status_code == 403 and "A-AUTH-CSRF" in forged.text
        missing = client.post("/ui/logout", data={})
        assert missing.status_code == 403
        assert client.get("/ui/catalog").status_code == 200  # still logged in
        out = client.post("/ui/logout", data={"csrf_token": csrf_token(page)})
        assert out.status_code == 303 and out.headers["location"] == "/ui/login?out=1"
        assert "colonnade_session" not in client.cookies
        assert "You are logged out" in client.get("/ui/login?out=1").text
        assert client.get("/ui/catalog").status_code == 303


def test_a_form_from_another_origin_is_refused_at_the_edge(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        log_in(client, governed.token("admin"))
        token = csrf_token(client.get("/ui/catalog").text)
        response = client.post(
            "/ui/logout", data={"csrf_token": token}, headers={"origin": "http://evil.example"}
        )
        assert response.status_code == 403 and "A-AUTH-ORIGIN" in response.text
        assert client.get("/ui/catalog").status_code == 200


def test_a_revoked_key_ends_its_session(governed: Governed) -> None:
    admin = governed.token("admin")
    with governed.rest(admin) as rest:
        made = rest.post("/v1/keys", json={"owner": "page-user", "persona": "developer", "team": "team-a"})
        assert made.status_code == 201, made.text
        key = made.json()
    with page_client(governed.base_url) as client:
        assert log_in(client, key["token"]).status_code == 303
        assert client.get("/ui/catalog").status_code == 200
        with governed.rest(admin) as rest:
            assert rest.delete(f"/v1/keys/{key['key']['id']}").status_code == 200
        ended = client.get("/ui/catalog")
        assert ended.status_code == 303
        target = parse_qs(urlsplit(ended.headers["location"]).query)
        assert target["ended"] == ["A-AUTH-REVOKED"]
        assert "colonnade_session" not in client.cookies
        notice = client.get(ended.headers["location"]).text
        assert "Your session ended" in notice and form_token(notice, "login_token")


def test_failed_logins_are_audited(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        log_in(client, UNKNOWN_KEY)
    gateway = governed.running.gateway
    audit = gateway.governance.audit
    assert audit is not None
    records = governed.running.run(audit.store.query(AuditFilter(kind="auth.failure"), limit=50))
    assert any(r.details.get("path") == "/ui/login" and r.code == "A-AUTH-API-KEY" for r in records)


def test_the_site_root_leads_to_the_catalog_after_login(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        root = client.get("/")
        assert root.status_code == 303 and root.headers["location"].startswith("/ui/login")
        done = log_in(client, governed.token("admin"), "/")
        assert done.headers["location"] == "/ui/catalog"  # where the session cookie is sent
        assert client.get("/ui/catalog").status_code == 200


def test_logging_in_again_replaces_the_session(governed: Governed) -> None:
    with page_client(governed.base_url) as client:
        log_in(client, governed.token("admin", sub="first"))
        first = client.cookies["colonnade_session"]
        log_in(client, governed.token("admin", sub="second"))
        assert client.cookies["colonnade_session"] != first
        assert 'id="visitor">user:second<' in client.get("/ui/catalog").text
    with page_client(governed.base_url) as stale:
        assert stale.get("/ui/catalog", headers={"cookie": f"colonnade_session={first}"}).status_code == 303
