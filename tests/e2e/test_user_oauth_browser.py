"""Per-user upstream OAuth (mode user_oauth) through the pages, in headless Chromium.

A person logs in with an API key, presses Connect on Connected accounts, approves at a real
provider (Authlib: authorization code with PKCE S256, rotating refresh tokens, RFC 7009
revocation) and comes back through the callback. Their calls then reach the backend with their own
upstream access token; the refresh token is sealed (its bytes are nowhere in the SQLite file); an
access token about to expire is refreshed (rotation honoured); revoking the person's key revokes
and deletes the grant, and the next call is told to connect, with the page's address.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from colonnade.store.audit_repo import AuditFilter
from tests.support.browser import chromium
from tests.support.exchange_rig import verify
from tests.support.page_login import csrf_token, log_in, page_client
from tests.support.user_oauth_rig import AUDIENCE, PROVIDER, UserOAuthRig, user_oauth_rig

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserOAuthRig]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        user_oauth_rig(tmp_path_factory.mktemp("user-oauth"), monkeypatch) as running,
    ):
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from chromium()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


def connect(page: Page, rig: UserOAuthRig, key: str, upstream_user: str) -> None:
    page.goto(f"{rig.base_url}/ui/connections")
    page.fill("#credential", key)
    page.click("#login")
    assert page.url == f"{rig.base_url}/ui/connections", page.content()
    assert "not connected" in page.inner_text(f"#account-{PROVIDER}")
    page.click(f"#connect-{PROVIDER} button")
    assert page.url.startswith(f"{rig.provider_url}/authorize?"), page.url
    assert "code_challenge_method=S256" in page.url
    page.fill("#user", upstream_user)
    page.click("#approve")
    assert page.url.startswith(f"{rig.base_url}/ui/connections/callback?"), page.url
    assert page.inner_text("#notice") == f"Your Acme CRM account is connected (as {upstream_user})."
    page.click("#back")
    assert "connected" in page.inner_text(f"#account-{PROVIDER}")
    assert upstream_user in page.inner_text(f"#account-{PROVIDER}")


def database_bytes(rig: UserOAuthRig) -> bytes:
    data = rig.running.gateway.settings.data_dir
    return b"".join(path.read_bytes() for path in Path(data).glob("colonnade.db*"))


def test_a_connected_user_calls_as_themselves_upstream_and_the_grant_ends_with_their_key(
    page: Page, rig: UserOAuthRig
) -> None:
    page_key_id, page_key = rig.key("alice")
    _, call_key = rig.key("alice")
    refused = rig.call(call_key)
    assert refused["status"] == "terminal_error", refused
    assert refused["error"]["code"] == "A-AUTH-UPSTREAM-CONNECT"
    assert refused["error"]["details"]["connect_url"] == f"{rig.base_url}/ui/connections"
    assert f"{rig.base_url}/ui/connections" in refused["error"]["message"]
    assert rig.hits == []  # refused before anything reached the backend

    connect(page, rig, page_key, "alice@crm")
    answer = rig.call(call_key)
    assert answer["status"] == "success", answer
    assert answer["output"]["sub"] == "alice@crm"
    assert rig.hits[-1]["claims"]["client_id"] == "colonnade-crm"
    assert rig.stats()["refreshes"] == 0  # the access token of the code exchange, kept in memory
    mcp = rig.call(call_key, "acme:faults:authorization")  # a server of the same provider
    assert mcp["status"] == "success", mcp
    scheme, _, sent = mcp["output"]["value"].partition(" ")
    assert scheme == "Bearer" and verify(sent, rig.keys, AUDIENCE)["sub"] == "alice@crm"

    # The refresh token is sealed at rest: none of its bytes are in the database files.
    issued = rig.stats()["issued_refresh_tokens"]
    assert len(issued) == 1
    stored = database_bytes(rig)
    assert issued[0].encode() not in stored
    rows = sqlite3.connect(rig.running.gateway.settings.data_dir / "colonnade.db").execute(
        "SELECT principal, provider, subject, refresh_token FROM upstream_grants"
    )
    (principal, provider, subject, sealed), *more = list(rows)
    assert not more and (principal, provider, subject) == ("user:alice", PROVIDER, "alice@crm")
    assert sealed.startswith("v1.") and issued[0] not in sealed

    # No token in the audit record: the mode and the upstream subject.
    audit = rig.running.gateway.governance.audit
    assert audit is not None
    records = rig.running.run(audit.store.query(AuditFilter(), limit=1000))
    mine = [r for r in records if r.call_id == answer["call_id"] and r.details.get("upstream")]
    assert [r.details["upstream"] for r in mine] == [{"mode": "user_oauth", "subject": "alice@crm"}]
    told = [r for r in records if r.call_id == refused["call_id"] and r.details.get("upstream")]
    assert told and told[0].details["upstream"]["mode"] == "user_oauth"
    assert issued[0].encode() not in stored and rig.hits[-1]["token"].encode() not in stored

    # Access tokens that would expire within the margin are refreshed; the refresh token rotates.
    rig.access_ttl(5)  # under expiry_margin_s (30 s): every token answered is due for refresh at once
    gateway_oauth = rig.running.gateway.upstream_credentials.user_oauth
    assert gateway_oauth is not None
    gateway_oauth.forget("user:alice")
    first = rig.call(call_key)
    second = rig.call(call_key)
    assert first["status"] == second["status"] == "success", (first, second)
    stats = rig.stats()
    assert stats["refreshes"] == 2  # the second used the rotated token: the first one is revoked
    assert (
        len(stats["live_refresh_tokens"]) == 1
        and stats["live_refresh_tokens"][0] == stats["issued_refresh_tokens"][-1]
    )
    assert all(token.encode() not in database_bytes(rig) for token in stats["issued_refresh_tokens"])
    rig.access_ttl(300)
    rig.call(call_key)
    rig.call(call_key)
    assert rig.stats()["refreshes"] == 3  # one refresh, then the cached access token

    # Revoking the person's key revokes the grant at the provider and deletes it.
    rig.revoke(page_key_id)
    stats = rig.stats()
    assert stats["live_refresh_tokens"] == [] and stats["revoked"] >= 1
    assert (
        list(
            sqlite3.connect(rig.running.gateway.settings.data_dir / "colonnade.db").execute(
                "SELECT principal FROM upstream_grants"
            )
        )
        == []
    )
    after = rig.call(call_key)
    assert after["error"]["code"] == "A-AUTH-UPSTREAM-CONNECT", after


def test_a_callback_without_the_browser_binding_is_refused(page: Page, rig: UserOAuthRig) -> None:
    _, key = rig.key("mallory")
    page.goto(f"{rig.base_url}/ui/connections")
    page.fill("#credential", key)
    page.click("#login")
    page.goto(f"{rig.base_url}/ui/connections/callback?code=stolen&state=forged")
    assert "did not start the connection" in page.inner_text("#error")
    page.goto(f"{rig.base_url}/ui/connections")
    assert "not connected" in page.inner_text(f"#account-{PROVIDER}")


def test_denying_at_the_provider_connects_nothing(page: Page, rig: UserOAuthRig) -> None:
    _, key = rig.key("dora")
    page.goto(f"{rig.base_url}/ui/connections")
    page.fill("#credential", key)
    page.click("#login")
    page.click(f"#connect-{PROVIDER} button")
    page.click("#deny")
    assert page.url.startswith(f"{rig.base_url}/ui/connections/callback?error=access_denied")
    assert "did not grant access: access_denied" in page.inner_text("#error")
    assert rig.call(key)["error"]["code"] == "A-AUTH-UPSTREAM-CONNECT"


def test_the_connect_form_is_csrf_checked_and_its_cookie_kept_to_the_callback(rig: UserOAuthRig) -> None:
    _, key = rig.key("erin")
    with page_client(rig.base_url) as client:
        assert log_in(client, key, "/ui/connections").status_code == 303
        listing = client.get("/ui/connections")
        assert listing.status_code == 200
        policy = listing.headers["content-security-policy"]
        assert f"form-action 'self' {rig.provider_url};" in policy
        forged = client.post(f"/ui/connections/{PROVIDER}/connect", data={"csrf_token": "forged"})
        assert forged.status_code == 403 and "A-AUTH-CSRF" in forged.text
        unknown = client.post("/ui/connections/wiki/connect", data={"csrf_token": csrf_token(listing.text)})
        assert unknown.status_code == 404 and "I-REQ-UNKNOWN-PROVIDER" in unknown.text
        started = client.post(
            f"/ui/connections/{PROVIDER}/connect", data={"csrf_token": csrf_token(listing.text)}
        )
        assert started.status_code == 303
        assert started.headers["location"].startswith(f"{rig.provider_url}/authorize?")
        cookie = started.headers["set-cookie"]
        assert cookie.startswith("colonnade_connect=v1.")
        assert all(part in cookie for part in ("HttpOnly", "SameSite=lax", "Path=/ui/connections/callback"))
