"""What every client of an authorization server needs: one HTTP session, and its client secret.

Token exchange (`exchange.py`) and per-user OAuth (`provider_client.py`) both post forms to an
authorization server's token endpoint with the gateway's client credentials.
"""

from __future__ import annotations

import aiohttp

from colonnade.adapters.credentials.grant import CredentialRefused
from colonnade.adapters.secrets import SecretResolver

__all__ = ["AuthorizationServerClient"]

_MISCONFIGURED = "S-TOOL-CONFIG"


class AuthorizationServerClient:
    """One aiohttp session opened on first use (inside the running loop) and closed with its owner."""

    _session: aiohttp.ClientSession | None = None

    def _pool(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    @staticmethod
    async def required_secret(secrets: SecretResolver, name: str, setting: str) -> str:
        """The client secret `name`, or a configuration refusal naming `setting` and how to set it."""
        value = await secrets.resolve(name)
        if value is None:
            raise CredentialRefused(
                _MISCONFIGURED, f"{setting} {name!r} is not set; {secrets.how_to_set(name)}"
            )
        return value
