"""The public signing keys of one trusted issuer: inline, or fetched from its JWKS URL and cached.

Fetched keys are reused for `cache_s`; a token naming a key id the cached set lacks triggers one
early re-fetch (the issuer rotated), at most once per `refetch_min_s`, so a flood of tokens with
made-up key ids cannot turn into a flood of requests to the issuer. When a fetch fails, the last
good set keeps serving; only an issuer whose keys were never fetched is unavailable.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet

__all__ = ["Fetch", "IssuerKeys", "KeysUnavailable", "fetch_json", "jwks_url_problem"]

Fetch = Callable[[str], Awaitable[Any]]
_FETCH_TIMEOUT_S = 5.0
_MAX_JWKS_BYTES = 256 * 1024


class KeysUnavailable(Exception):
    """The issuer's keys have never been fetched successfully."""


def jwks_url_problem(url: str) -> str | None:
    """Why a JWKS URL cannot be trusted (keys must come over TLS, or from this machine); None if fine."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname is not None:
        host = parts.hostname
        if host == "localhost":
            return None
        try:
            if ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            pass
    return f"the JWKS URL {url!r} must be https, or http on a loopback address"


async def fetch_json(url: str) -> Any:
    timeout = aiohttp.ClientTimeout(total=_FETCH_TIMEOUT_S)
    async with (
        aiohttp.ClientSession(timeout=timeout, trust_env=False) as session,
        session.get(url, headers={"Accept": "application/json"}) as response,
    ):
        response.raise_for_status()
        body = await response.content.read(_MAX_JWKS_BYTES + 1)
        if len(body) > _MAX_JWKS_BYTES:
            raise ValueError("the JWKS document is too large")
        return json.loads(body)


class IssuerKeys:
    def __init__(
        self,
        *,
        keys: list[dict[str, Any]] | None = None,
        jwks_url: str | None = None,
        cache_s: float = 300.0,
        refetch_min_s: float = 30.0,
        fetch: Fetch = fetch_json,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (keys is None) == (jwks_url is None):
            raise ValueError("give exactly one of keys and jwks_url")
        self.jwks_url = jwks_url
        self.cache_s = cache_s
        self.refetch_min_s = refetch_min_s
        self._fetch = fetch
        self._clock = clock
        self._set: KeySet | None = _key_set({"keys": keys}) if keys is not None else None
        self._fetched_at = -float("inf")
        self._lock = asyncio.Lock()

    async def key_for(self, kid: str | None, alg: str) -> Key | None:
        """The key a token's header names (by `kid`, else the only key fit for `alg`); None if unknown."""
        key_set = await self._current()
        found = _pick(key_set, kid, alg)
        if found is None and self.jwks_url is not None and self._may_refetch():
            key_set = await self._refresh(force=True)
            found = _pick(key_set, kid, alg)
        return found

    async def _current(self) -> KeySet:
        if self._set is not None and (self.jwks_url is None or not self._stale()):
            return self._set
        return await self._refresh(force=False)

    def _stale(self) -> bool:
        return self._clock() - self._fetched_at >= self.cache_s

    def _may_refetch(self) -> bool:
        return self._clock() - self._fetched_at >= self.refetch_min_s

    async def _refresh(self, *, force: bool) -> KeySet:
        assert self.jwks_url is not None
        async with self._lock:
            if self._set is not None and not (force and self._may_refetch()) and not self._stale():
                return self._set  # another request refreshed it while this one waited
            try:
                document = await self._fetch(self.jwks_url)
                self._set = _key_set(document)
            except (OSError, ValueError, TypeError, KeyError, JoseError, aiohttp.ClientError, TimeoutError):
                if self._set is None:
                    raise KeysUnavailable(self.jwks_url) from None
            finally:
                self._fetched_at = self._clock()
            return self._set


def _key_set(document: Any) -> KeySet:
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("a JWKS document is an object with a 'keys' list")
    public = [key for key in document["keys"] if isinstance(key, dict) and "d" not in key]
    return KeySet.import_key_set({"keys": public})


def _pick(key_set: KeySet, kid: str | None, alg: str) -> Key | None:
    keys = list(key_set)
    if kid is not None:
        matching = [key for key in keys if key.kid == kid]
    else:
        matching = [key for key in keys if key.get("alg") in (None, alg)]
    return matching[0] if len(matching) == 1 else None
