"""Mode user_oauth's grants service: the connect flow's checks, sealing per principal, refresh.

The refusals of a callback are checked without any provider (nothing is sent before the binding
holds). The grant's life (connected, refreshed by many calls at once with one request, revoked
at the provider and then deleted with a connect outcome) runs against the real Authlib provider
of the browser test, with the flow driven over HTTP as a browser would.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.adapters.credentials import ConnectFailed, CredentialRefused, UserOAuth
from colonnade.adapters.credentials.user_oauth import CONNECT
from colonnade.adapters.secrets import EnvSecretResolver
from colonnade.config import Settings, UserOAuthCredential, UserOAuthProvider
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.sealing import Sealer
from colonnade.store.upstream_grants_repo import UpstreamGrantStore
from tests.support.user_oauth_rig import CLIENT_ID, CLIENT_SECRET, provider_process

REDIRECT = "http://127.0.0.1:9/ui/connections/callback"
CONNECT_URL = "http://127.0.0.1:9/ui/connections"
ALICE = Principal(PrincipalKind.USER, "alice", tenant="acme")
BOB = Principal(PrincipalKind.USER, "bob", tenant="acme")
CRM = UserOAuthCredential(mode="user_oauth", provider="crm")


def provider(url: str = "http://127.0.0.1:1") -> UserOAuthProvider:
    return UserOAuthProvider(
        display_name="Acme CRM",
        authorization_endpoint=f"{url}/authorize",
        token_endpoint=f"{url}/token",
        revocation_endpoint=f"{url}/revoke",
        client_id=CLIENT_ID,
        client_secret="CRM_CLIENT",
        scopes=["crm.read"],
    )


def service(store: UpstreamGrantStore | None, url: str = "http://127.0.0.1:1") -> UserOAuth:
    secrets = EnvSecretResolver({"COLONNADE_SECRET_CRM_CLIENT": CLIENT_SECRET})
    return UserOAuth({"crm": provider(url)}, secrets, Sealer.generate(), store, connect_url=CONNECT_URL)


def test_connecting_sends_an_s256_challenge_of_the_verifier_kept_sealed_in_the_binding() -> None:
    oauth = service(None)
    started = oauth.begin(ALICE, "crm", REDIRECT)
    query = {key: values[0] for key, values in parse_qs(urlsplit(started.url).query).items()}
    assert query["response_type"] == "code" and query["client_id"] == CLIENT_ID
    assert query["code_challenge_method"] == "S256" and query["scope"] == "crm.read"
    assert query["redirect_uri"] == REDIRECT
    bound = json.loads(oauth.sealer.open(started.binding, context="user_oauth.connect"))
    digest = hashlib.sha256(bound["verifier"].encode()).digest()
    assert query["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert bound["verifier"] not in started.url and bound["state"] == query["state"]
    assert bound["principal"] == "user:alice"
    with pytest.raises(ConnectFailed, match="only a person"):
        oauth.begin(Principal(PrincipalKind.AGENT, "bot", tenant="acme"), "crm", REDIRECT)
    with pytest.raises(ConnectFailed, match="no upstream account provider named 'wiki'"):
        oauth.begin(ALICE, "wiki", REDIRECT)


async def test_a_callback_that_does_not_match_its_binding_is_refused_before_the_provider(
    engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    oauth = service(UpstreamGrantStore(engine))  # the provider at 127.0.0.1:1 would fail if asked
    started = oauth.begin(ALICE, "crm", REDIRECT)
    state = parse_qs(urlsplit(started.url).query)["state"][0]
    cases = [
        (None, state, ALICE, "did not start the connection"),
        (started.binding[:-4] + "AAAA", state, ALICE, "does not open here"),
        (oauth.begin(ALICE, "crm", REDIRECT).binding, state, ALICE, "does not belong"),
        (started.binding, "forged", ALICE, "does not belong"),
        (started.binding, state, BOB, "started by another login"),
    ]
    for binding, given_state, who, words in cases:
        with pytest.raises(ConnectFailed, match=words):
            await oauth.complete(binding, given_state, "code", principal=who)
    later = time.time() + 601
    monkeypatch.setattr("colonnade.adapters.credentials.user_oauth.time.time", lambda: later)
    with pytest.raises(ConnectFailed, match="longer than 10 minutes"):
        await oauth.complete(started.binding, state, "code", principal=ALICE)
    assert await UpstreamGrantStore(engine).of_principal("user:alice") == []


async def test_a_caller_without_a_grant_is_told_where_to_connect(engine: AsyncEngine) -> None:
    oauth = service(UpstreamGrantStore(engine))
    with pytest.raises(CredentialRefused) as refused:
        await oauth.grant(CRM, ALICE)
    assert refused.value.code == CONNECT == "A-AUTH-UPSTREAM-CONNECT"
    assert CONNECT_URL in refused.value.message and "Acme CRM" in refused.value.message
    assert refused.value.details == {"connect_url": CONNECT_URL, "provider": "crm"}
    assert refused.value.credential == {"mode": "user_oauth", "provider": "crm", "subject": None}
    with pytest.raises(CredentialRefused) as unknown:
        await oauth.grant(UserOAuthCredential(mode="user_oauth", provider="wiki"), ALICE)
    assert unknown.value.code == "S-TOOL-CONFIG" and "'wiki'" in unknown.value.message


def test_a_server_naming_an_unknown_provider_is_a_settings_error() -> None:
    server = {"name": "crm", "transport": "http", "url": "http://127.0.0.1:1/mcp"}
    server["auth"] = {"mode": "user_oauth", "provider": "crm"}  # type: ignore[assignment]
    with pytest.raises(ValidationError, match=r"provider 'crm', which `upstream_oauth:` does not define"):
        Settings(servers=[server])  # type: ignore[list-item]
    assert Settings(servers=[server], upstream_oauth={"crm": provider()}).servers[0].auth == CRM  # type: ignore[list-item]


# With the real provider.


@pytest.fixture(scope="module")
def provider_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with provider_process(tmp_path_factory.mktemp("provider") / "provider.log", REDIRECT) as url:
        yield url


@pytest.fixture
async def connected(engine: AsyncEngine, provider_url: str) -> AsyncIterator[UserOAuth]:
    """Alice's grant, made through the provider's consent form as a browser would."""
    oauth = service(UpstreamGrantStore(engine), provider_url)
    started = oauth.begin(ALICE, "crm", REDIRECT)
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        consent = await browser.get(started.url)
        assert consent.status_code == 200 and 'id="approve"' in consent.text
        query = urlsplit(started.url).query
        back = await browser.post(
            f"{provider_url}/authorize?{query}", data={"user": "alice@crm", "decision": "approve"}
        )
    assert back.status_code == 302, back.text
    returned = parse_qs(urlsplit(back.headers["location"]).query)
    connection = await oauth.complete(
        started.binding, returned["state"][0], returned["code"][0], principal=ALICE
    )
    assert (connection.connected, connection.subject, connection.scopes) == (True, "alice@crm", ("crm.read",))
    try:
        yield oauth
    finally:
        await oauth.aclose()


async def stats(provider_url: str) -> dict[str, object]:
    async with httpx2.AsyncClient() as client:
        return dict((await client.get(f"{provider_url}/stats")).json())


@pytest.mark.e2e
async def test_a_copied_grant_does_not_open_for_another_principal(
    connected: UserOAuth, engine: AsyncEngine
) -> None:
    store = UpstreamGrantStore(engine)
    alices = await store.get("user:alice", "crm")
    assert alices is not None
    await store.put(replace(alices, principal="user:bob"))  # the sealed value copied into bob's row
    with pytest.raises(CredentialRefused) as refused:
        await connected.grant(CRM, BOB)
    assert refused.value.code == CONNECT and "cannot be opened here" in refused.value.message
    assert (await connected.grant(CRM, ALICE)).subject == "alice@crm"


@pytest.mark.e2e
async def test_concurrent_calls_share_one_refresh_and_a_grant_revoked_upstream_asks_to_connect_again(
    connected: UserOAuth, engine: AsyncEngine, provider_url: str
) -> None:
    connected.forget("user:alice")  # as if the access token had expired
    before = connected.refreshes
    grants = await asyncio.gather(*(connected.grant(CRM, ALICE) for _ in range(8)))
    assert connected.refreshes == before + 1 and {g.token for g in grants} == {grants[0].token}
    assert grants[0].audit() == {"mode": "user_oauth", "subject": "alice@crm"}
    assert grants[0].token not in repr(grants[0])

    live = (await stats(provider_url))["live_refresh_tokens"]
    assert isinstance(live, list) and live
    async with httpx2.AsyncClient(auth=(CLIENT_ID, CLIENT_SECRET)) as client:
        for token in live:
            assert (await client.post(f"{provider_url}/revoke", data={"token": token})).status_code == 200
    connected.forget("user:alice")
    with pytest.raises(CredentialRefused) as refused:
        await connected.grant(CRM, ALICE)
    assert refused.value.code == CONNECT and "expired or was revoked" in refused.value.message
    assert await UpstreamGrantStore(engine).get("user:alice", "crm") is None


@pytest.mark.e2e
async def test_disconnecting_revokes_at_the_provider_and_deletes(
    connected: UserOAuth, engine: AsyncEngine, provider_url: str
) -> None:
    revoked = (await stats(provider_url))["revoked"]
    assert await connected.disconnect("user:alice", "crm") == 1
    assert (await stats(provider_url))["revoked"] == int(revoked) + 1  # type: ignore[call-overload]
    assert await UpstreamGrantStore(engine).of_principal("user:alice") == []
    with pytest.raises(CredentialRefused):
        await connected.grant(CRM, ALICE)  # its access token went from memory too
