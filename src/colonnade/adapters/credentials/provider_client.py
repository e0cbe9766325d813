"""The gateway as an OAuth client of one upstream provider: PKCE, code and refresh grants, revocation.

The gateway authenticates with client_secret_basic (the secret read from the secrets resolver on
each use, so a rotated secret is picked up). Answers are read as RFC 6749 token responses; a
provider that cannot be reached is a retryable refusal, one that refuses is terminal.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from colonnade.adapters.credentials.as_client import AuthorizationServerClient
from colonnade.adapters.credentials.grant import CredentialRefused
from colonnade.adapters.secrets import SecretResolver
from colonnade.config import UserOAuthProvider

__all__ = ["UNREACHABLE", "ProviderClient", "ProviderRefused", "TokenAnswer", "pkce_pair"]

UNREACHABLE = "R-UPSTREAM-OAUTH"
logger = logging.getLogger(__name__)


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) per RFC 7636: 64 characters of verifier."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class TokenAnswer:
    """A token response: never shown in a repr."""

    access_token: str = field(repr=False)
    expires_in: float
    refresh_token: str | None = field(repr=False)
    scope: str | None


class ProviderRefused(Exception):
    """The provider answered with an OAuth error (`error` is its code, e.g. invalid_grant)."""

    def __init__(self, error: str, status: int) -> None:
        super().__init__(f"{error} (HTTP {status})")
        self.error = error
        self.status = status


class ProviderClient(AuthorizationServerClient):
    """One provider's endpoints over a shared aiohttp session."""

    def __init__(self, name: str, settings: UserOAuthProvider, secrets: SecretResolver) -> None:
        self.name = name
        self.settings = settings
        self.secrets = secrets

    async def code(self, code: str, verifier: str, redirect_uri: str) -> TokenAnswer:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": redirect_uri,
        }
        return _token_answer(*await self._post(self.settings.token_endpoint, form))

    async def refresh(self, refresh_token: str) -> TokenAnswer:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return _token_answer(*await self._post(self.settings.token_endpoint, form))

    async def revoke(self, refresh_token: str) -> bool:
        """RFC 7009 at the revocation endpoint, when there is one; False when it could not be done
        (the grant is deleted here all the same, and the provider lets it expire)."""
        endpoint = self.settings.revocation_endpoint
        if endpoint is None:
            return False
        form = {"token": refresh_token, "token_type_hint": "refresh_token"}
        try:
            status, _ = await self._post(endpoint, form)
        except CredentialRefused as exc:
            logger.warning("revoking a grant at %s failed: %s", self.name, exc.message)
            return False
        if status != 200:
            logger.warning("revoking a grant at %s failed: HTTP %s", self.name, status)
        return status == 200

    async def _post(self, url: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        auth = aiohttp.encode_basic_auth(self.settings.client_id, await self._client_secret())
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                async with self._pool().post(url, data=form, headers={"authorization": auth}) as answer:
                    return answer.status, _json(await answer.read())
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise CredentialRefused(
                UNREACHABLE, f"the OAuth provider {self.name!r} did not answer ({type(exc).__name__})"
            ) from None

    async def _client_secret(self) -> str:
        return await self.required_secret(
            self.secrets, self.settings.client_secret, f"upstream_oauth.{self.name}.client_secret"
        )


def _token_answer(status: int, document: dict[str, Any]) -> TokenAnswer:
    if status != 200:
        error = document.get("error")
        raise ProviderRefused(error if isinstance(error, str) else "refused", status)
    access = document.get("access_token")
    lifetime = document.get("expires_in")
    refresh = document.get("refresh_token")
    scope = document.get("scope")
    if not isinstance(access, str) or not access or not isinstance(lifetime, int | float):
        raise ProviderRefused("the token answer lacks access_token or expires_in", status)
    return TokenAnswer(
        access,
        float(lifetime),
        refresh if isinstance(refresh, str) and refresh else None,
        scope if isinstance(scope, str) else None,
    )


def _json(body: bytes) -> dict[str, Any]:
    try:
        document = json.loads(body)
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}
