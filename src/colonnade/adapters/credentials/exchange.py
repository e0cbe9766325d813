"""Mode `exchange`: RFC 8693 token exchange at the configured authorization server, cached.

The gateway authenticates as its OAuth client (the actor), sends the caller's token as the
subject token and asks for one token for the upstream's audience and scopes. The answer is kept
per (caller token, audience, scopes) until `expiry_margin_s` before it expires, and never past
the caller's own token; concurrent calls of one caller share one exchange in flight.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from collections import OrderedDict
from typing import Any

import aiohttp

from colonnade.adapters.credentials.as_client import AuthorizationServerClient
from colonnade.adapters.credentials.forward import live_token
from colonnade.adapters.credentials.grant import CredentialRefused, UpstreamGrant
from colonnade.adapters.secrets import SecretResolver
from colonnade.config import ExchangeCredential, TokenExchangeSettings
from colonnade.governance.principal import CallerToken

__all__ = ["GRANT_TYPE", "REFUSED", "TOKEN_TYPE_ACCESS", "UNREACHABLE", "TokenExchange", "token_subject"]

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
TOKEN_TYPE_ACCESS = "urn:ietf:params:oauth:token-type:access_token"
REFUSED = "A-AUTH-UPSTREAM-EXCHANGE"
UNREACHABLE = "R-UPSTREAM-EXCHANGE"
_Key = tuple[str, str, tuple[str, ...], bool]


class TokenExchange(AuthorizationServerClient):
    """One authorization server's exchanges for this gateway; `aclose()` it on shutdown."""

    def __init__(self, settings: TokenExchangeSettings, secrets: SecretResolver) -> None:
        self.settings = settings
        self.secrets = secrets
        self.exchanges = 0
        """Exchanges sent to the authorization server (a cached token sends none)."""
        self._cache: OrderedDict[_Key, tuple[UpstreamGrant, float]] = OrderedDict()
        self._in_flight: dict[_Key, asyncio.Future[tuple[UpstreamGrant, float]]] = {}

    async def grant(
        self, caller: CallerToken | None, spec: ExchangeCredential, *, agent: str | None = None
    ) -> UpstreamGrant:
        """The exchanged token; `agent` is the calling agent's id when an agent calls (with `actor:
        agent` its token goes as the actor token too, so the AS names the agent in `act`)."""
        token = live_token(caller, "exchange")
        scopes = tuple(sorted(set(spec.scopes)))
        as_agent = spec.actor == "agent" and agent is not None
        key = (hashlib.sha256(token.token.encode()).hexdigest(), spec.audience, scopes, as_agent)
        cached = self._cache.get(key)
        if cached is not None:
            if time.time() < cached[1]:
                self._cache.move_to_end(key)
                return cached[0]
            del self._cache[key]
        waiting = self._in_flight.get(key)
        if waiting is not None:
            return (await asyncio.shield(waiting))[0]
        future: asyncio.Future[tuple[UpstreamGrant, float]] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            outcome = await self._exchange(token, spec.audience, scopes, as_agent=as_agent)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failure nobody else waited for is not "never retrieved"
            raise
        finally:
            del self._in_flight[key]
        future.set_result(outcome)
        self._cache[key] = outcome
        if len(self._cache) > self.settings.cache_size:
            self._cache.popitem(last=False)
        return outcome[0]

    async def _exchange(
        self, caller: CallerToken, audience: str, scopes: tuple[str, ...], *, as_agent: bool
    ) -> tuple[UpstreamGrant, float]:
        form = {
            "grant_type": GRANT_TYPE,
            "subject_token": caller.token,
            "subject_token_type": TOKEN_TYPE_ACCESS,
            "requested_token_type": TOKEN_TYPE_ACCESS,
            "audience": audience,
        }
        if scopes:
            form["scope"] = " ".join(scopes)
        if as_agent:
            # The agent's own token, which names it (RFC 8693 section 2.1): the AS puts it in `act`.
            form["actor_token"] = caller.token
            form["actor_token_type"] = TOKEN_TYPE_ACCESS
        auth = {
            "authorization": aiohttp.encode_basic_auth(self.settings.client_id, await self._client_secret())
        }
        started = time.time()
        self.exchanges += 1
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                async with self._pool().post(self.settings.token_endpoint, data=form, headers=auth) as answer:
                    status = answer.status
                    body = await answer.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise CredentialRefused(
                UNREACHABLE,
                f"the authorization server did not answer the token exchange ({type(exc).__name__})",
            ) from None
        document = _json(body)
        if status != 200:
            said = document.get("error") if isinstance(document.get("error"), str) else f"HTTP {status}"
            raise CredentialRefused(
                REFUSED, f"the authorization server refused the exchange for {audience!r}: {str(said)[:80]}"
            )
        access = document.get("access_token")
        lifetime = document.get("expires_in")
        if not isinstance(access, str) or not access or not isinstance(lifetime, int | float):
            raise CredentialRefused(
                REFUSED, "the authorization server's exchange answer lacks access_token or expires_in"
            )
        grant = UpstreamGrant("exchange", token_subject(access) or caller.subject, access)
        reuse_until = min(started + float(lifetime), caller.expires_at) - self.settings.expiry_margin_s
        return grant, reuse_until

    async def _client_secret(self) -> str:
        return await self.required_secret(
            self.secrets, self.settings.client_secret, "token_exchange.client_secret"
        )


def _json(body: bytes) -> dict[str, Any]:
    try:
        document = json.loads(body)
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def token_subject(token: str) -> str | None:
    """The `sub` of a JWT access token (unverified: for the audit record); None for an opaque one."""
    subject = _claims(token).get("sub")
    return subject if isinstance(subject, str) and subject else None


def _claims(token: str) -> dict[str, Any]:
    """The payload of a JWT access token, read (not verified: the upstream verifies it) for the
    audit record's subject; an opaque token has none."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        return _json(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return {}
