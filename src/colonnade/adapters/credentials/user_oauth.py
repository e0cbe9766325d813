"""Mode `user_oauth`: each person's own grant at an upstream provider, made on the pages.

Connecting runs the authorization code flow with PKCE (S256). What the callback must check comes
back in a sealed binding (principal, provider, state, verifier, expiry), kept by the browser in a
cookie of the page that started it: nothing is held per replica, another site cannot complete a
flow in a visitor's name, and the verifier never leaves the gateway in clear. The refresh token is
stored sealed with a context naming provider and principal, so a copied row does not open for
anyone else; access tokens live in memory until shortly before they expire and are refreshed with
the refresh token (a rotated refresh token replaces the stored one). A grant the provider no
longer honours is deleted, and the caller is told to connect again.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from colonnade.adapters.credentials.exchange import token_subject
from colonnade.adapters.credentials.grant import CredentialRefused, UpstreamGrant
from colonnade.adapters.credentials.provider_client import (
    ProviderClient,
    ProviderRefused,
    TokenAnswer,
    pkce_pair,
)
from colonnade.adapters.secrets import SecretResolver
from colonnade.config import UserOAuthCredential, UserOAuthProvider
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.sealing import Sealer, SealError
from colonnade.store.upstream_grants_repo import GrantRecord, UpstreamGrantStore

__all__ = [
    "CONNECT",
    "MODE",
    "Authorization",
    "ConnectFailed",
    "Connection",
    "UserOAuth",
]

MODE = "user_oauth"
CONNECT = "A-AUTH-UPSTREAM-CONNECT"
_REFUSED = "A-AUTH-UPSTREAM-OAUTH"
_MISCONFIGURED = "S-TOOL-CONFIG"
_BINDING = "user_oauth.connect"
_CONNECT_WINDOW_S = 600.0
_CACHE_MAX = 10_000
_Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Connection:
    """One provider as the page lists it for one person."""

    provider: str
    display_name: str
    connected: bool
    subject: str | None = None
    scopes: tuple[str, ...] = ()
    since: datetime | None = None


@dataclass(frozen=True, slots=True)
class Authorization:
    """Where to send the browser, and the sealed binding its cookie keeps until the callback."""

    url: str
    binding: str


class ConnectFailed(Exception):
    """Connecting did not complete: the message says why and what to do (shown on the page)."""


@dataclass(frozen=True, slots=True)
class _Cached:
    token: str
    subject: str
    reuse_until: float


def _context(provider: str, principal: str) -> str:
    return f"upstream_grant:{provider}:{principal}"


class UserOAuth:
    """Every provider of `upstream_oauth:`, with the grants of every person; `aclose()` on shutdown."""

    def __init__(
        self,
        providers: Mapping[str, UserOAuthProvider],
        secrets: SecretResolver,
        sealer: Sealer,
        store: UpstreamGrantStore | None,
        *,
        connect_url: str,
    ) -> None:
        self.providers = dict(providers)
        self.clients = {name: ProviderClient(name, spec, secrets) for name, spec in providers.items()}
        self.sealer = sealer
        self.store = store
        self.connect_url = connect_url
        """The Connected accounts page, named in the refusal of a caller who has not connected."""
        self.refreshes = 0
        """Refresh grants sent to providers (a cached access token sends none)."""
        self._cache: dict[_Key, _Cached] = {}
        self._in_flight: dict[_Key, asyncio.Future[_Cached]] = {}

    # The pages' side: list, connect, disconnect.

    async def connections(self, principal: Principal) -> list[Connection]:
        held = {g.provider: g for g in await self.store.of_principal(principal.key)} if self.store else {}
        shown = []
        for name, spec in sorted(self.providers.items()):
            grant = held.get(name)
            display = spec.display_name or name
            if grant is None:
                shown.append(Connection(name, display, False))
            else:
                shown.append(Connection(name, display, True, grant.subject, grant.scopes, grant.created_at))
        return shown

    def begin(self, principal: Principal, provider: str, redirect_uri: str) -> Authorization:
        """The provider's authorization URL for this person, and the binding the callback checks."""
        spec = self._provider(provider)
        if principal.kind is not PrincipalKind.USER:
            raise ConnectFailed("only a person logged in to the pages connects an upstream account")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        bound = {
            "principal": principal.key,
            "tenant": principal.tenant,
            "provider": provider,
            "state": state,
            "verifier": verifier,
            "redirect_uri": redirect_uri,
            "expires_at": time.time() + _CONNECT_WINDOW_S,
        }
        binding = self.sealer.seal(json.dumps(bound).encode(), context=_BINDING)
        query = {
            "response_type": "code",
            "client_id": spec.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if spec.scopes:
            query["scope"] = " ".join(spec.scopes)
        separator = "&" if "?" in spec.authorization_endpoint else "?"
        return Authorization(f"{spec.authorization_endpoint}{separator}{urlencode(query)}", binding)

    async def complete(
        self, binding: str | None, state: str | None, code: str | None, *, principal: Principal | None
    ) -> Connection:
        """Check the callback against its binding, exchange the code and store the grant (sealed).

        `principal` is the page session's, when the browser sent its cookie: it must be the one
        that started. The binding alone suffices otherwise (a cross-site return may not carry it).
        """
        if self.store is None:
            raise ConnectFailed("this gateway has no database, so it cannot keep upstream grants")
        bound = self._opened(binding)
        if state is None or not secrets.compare_digest(str(bound["state"]), state):
            raise ConnectFailed("the answer does not belong to the connection this browser started")
        if principal is not None and principal.key != bound["principal"]:
            raise ConnectFailed("this connection was started by another login; start it again")
        if not code:
            raise ConnectFailed("the provider sent no authorization code back")
        provider = str(bound["provider"])
        self._provider(provider)
        client = self.clients[provider]
        try:
            answer = await client.code(code, str(bound["verifier"]), str(bound["redirect_uri"]))
        except ProviderRefused as exc:
            raise ConnectFailed(f"{provider} refused the authorization code: {exc.error[:80]}") from None
        except CredentialRefused as exc:
            raise ConnectFailed(exc.message) from None
        if answer.refresh_token is None:
            raise ConnectFailed(
                f"{provider} granted no refresh token, so the gateway could not act later; "
                "its client must be allowed the refresh_token grant (or offline_access)"
            )
        who = str(bound["principal"])
        subject = token_subject(answer.access_token) or who
        now = datetime.now(UTC)
        scopes = tuple(sorted((answer.scope or " ".join(self.providers[provider].scopes)).split()))
        sealed = self.sealer.seal(answer.refresh_token.encode(), context=_context(provider, who))
        tenant = bound.get("tenant")
        record = GrantRecord(
            who, provider, tenant if isinstance(tenant, str) else None, subject, scopes, sealed, now, now
        )
        earlier = await self.store.get(who, provider)
        await self.store.put(record)
        if earlier is not None:
            await self._revoke(earlier)
        self._keep((who, provider), answer, subject)
        return Connection(
            provider, self.providers[provider].display_name or provider, True, subject, scopes, now
        )

    async def disconnect(self, principal_key: str, provider: str | None = None) -> int:
        """Revoke at the provider (RFC 7009, where it has an endpoint) and delete; the grants removed."""
        for key in [key for key in self._cache if key[0] == principal_key]:
            if provider is None or key[1] == provider:
                del self._cache[key]
        if self.store is None:
            return 0
        removed = await self.store.remove(principal_key, provider)
        for record in removed:
            await self._revoke(record)
        return len(removed)

    def forget(self, principal_key: str) -> None:
        """Drop the principal's access tokens from memory (another replica deleted the grants)."""
        for key in [key for key in self._cache if key[0] == principal_key]:
            del self._cache[key]

    # The calls' side: the access token for this caller.

    async def grant(self, spec: UserOAuthCredential, principal: Principal) -> UpstreamGrant:
        if spec.provider not in self.providers:
            raise CredentialRefused(
                _MISCONFIGURED,
                f"this upstream's credential names provider {spec.provider!r}, which `upstream_oauth:` "
                "does not define",
            )
        key = (principal.key, spec.provider)
        cached = self._cache.get(key)
        if cached is None or time.time() >= cached.reuse_until:
            waiting = self._in_flight.get(key)
            if waiting is not None:
                cached = await asyncio.shield(waiting)
            else:
                cached = await self._refreshed(key)
        return UpstreamGrant(MODE, cached.subject, cached.token)

    async def _refreshed(self, key: _Key) -> _Cached:
        future: asyncio.Future[_Cached] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            fresh = await self._refresh(key)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failure nobody else waited for is not "never retrieved"
            raise
        finally:
            del self._in_flight[key]
        future.set_result(fresh)
        return fresh

    async def _refresh(self, key: _Key, *, again: bool = True) -> _Cached:
        principal, provider = key
        record = await self.store.get(principal, provider) if self.store is not None else None
        if record is None:
            raise self._not_connected(provider, "you have not connected")
        try:
            refresh_token = self.sealer.open(
                record.sealed_refresh_token, context=_context(provider, principal)
            )
        except SealError:
            raise self._not_connected(provider, "your stored grant cannot be opened here") from None
        self.refreshes += 1
        try:
            answer = await self.clients[provider].refresh(refresh_token.decode())
        except ProviderRefused as exc:
            if exc.error != "invalid_grant":
                raise CredentialRefused(
                    _REFUSED, f"{provider} refused to refresh your grant: {exc.error[:80]}"
                ) from None
            now = await self.store.get(principal, provider) if self.store is not None else None
            if again and now is not None and now.sealed_refresh_token != record.sealed_refresh_token:
                return await self._refresh(key, again=False)  # another replica rotated it meanwhile
            if self.store is not None:
                await self.store.remove(principal, provider)
            raise self._not_connected(provider, "your grant has expired or was revoked") from None
        if answer.refresh_token is not None and answer.refresh_token != refresh_token.decode():
            sealed = self.sealer.seal(answer.refresh_token.encode(), context=_context(provider, principal))
            if self.store is not None:
                await self.store.rotate(principal, provider, record.sealed_refresh_token, sealed)
        return self._keep(key, answer, token_subject(answer.access_token) or record.subject)

    def _keep(self, key: _Key, answer: TokenAnswer, subject: str) -> _Cached:
        margin = self.providers[key[1]].expiry_margin_s
        now = time.time()
        cached = _Cached(answer.access_token, subject, now + answer.expires_in - margin)
        self._cache.pop(key, None)
        self._cache[key] = cached
        if len(self._cache) > _CACHE_MAX:
            for stale in [k for k, held in self._cache.items() if held.reuse_until <= now]:
                del self._cache[stale]
            while len(self._cache) > _CACHE_MAX:  # the least recently refreshed go first
                del self._cache[next(iter(self._cache))]
        return cached

    def _not_connected(self, provider: str, why: str) -> CredentialRefused:
        name = self.providers[provider].display_name or provider
        return CredentialRefused(
            CONNECT,
            f"{why} your {name} account: open {self.connect_url} and press Connect for {name}, "
            "then call again",
            details={"connect_url": self.connect_url, "provider": provider},
            credential={"mode": MODE, "provider": provider, "subject": None},
        )

    async def _revoke(self, record: GrantRecord) -> None:
        try:
            token = self.sealer.open(
                record.sealed_refresh_token, context=_context(record.provider, record.principal)
            )
        except SealError:
            return
        client = self.clients.get(record.provider)
        if client is not None:
            await client.revoke(token.decode())

    def _provider(self, name: str) -> UserOAuthProvider:
        spec = self.providers.get(name)
        if spec is None:
            raise ConnectFailed(f"no upstream account provider named {name!r} is configured")
        return spec

    def _opened(self, binding: str | None) -> dict[str, Any]:
        if not binding:
            raise ConnectFailed(
                "this browser did not start the connection (its cookie is missing or has expired); "
                "start it again from the Connected accounts page"
            )
        try:
            bound = json.loads(self.sealer.open(binding, context=_BINDING))
        except (SealError, ValueError):
            raise ConnectFailed("the connection's cookie does not open here; start it again") from None
        if not isinstance(bound, dict) or float(bound.get("expires_at", 0)) < time.time():
            raise ConnectFailed("the connection took longer than 10 minutes; start it again")
        return bound

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.aclose()
