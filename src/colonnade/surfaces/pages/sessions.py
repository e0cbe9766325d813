"""Page sessions: a person logs in once with a credential, then the browser sends a random cookie.

The cookie is a random id (256 bits). The gateway keeps, keyed by the id's SHA-256, the credential
it stands for, the session's CSRF token and its expiry, sealed (JWE, A256GCM) with a key derived
from the cookie itself: whoever reads the store without the cookie learns nothing of the
credential. Every page request authenticates the kept credential again, so a revoked key or an
expired token ends the session at once. Sessions are kept in the shared values with their
lifetime as expiry: with Redis (`shared_state.redis_url`) a login on one replica is valid on every
other, and a logout or an expiry ends it everywhere. While Redis is unreachable a login is kept in
this process only (valid on this replica until it expires) and the shared ones cannot be read:
their visitors log in again.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import orjson
from joserfc import jwe
from joserfc.errors import JoseError
from joserfc.jwk import OctKey

from colonnade.shared_state import SharedStateUnavailable, SharedValues
from colonnade.shared_state.values import LocalValues

__all__ = ["SESSION_COOKIE", "SESSION_COOKIE_PATH", "PageSession", "PageSessions"]

logger = logging.getLogger(__name__)

SESSION_COOKIE = "colonnade_session"
SESSION_COOKIE_PATH = "/ui"
"""The cookie goes to the pages only: REST, MCP and `/metrics` never receive it."""
_KEY_PREFIX = "page-session:"
_SEAL = {"alg": "dir", "enc": "A256GCM"}


@dataclass(frozen=True, slots=True)
class PageSession:
    """One logged-in browser: the credential it stands for and the token its forms must carry."""

    credential: str
    csrf_token: str
    expires_at: float
    """Wall-clock time (epoch seconds): replicas share it."""
    principal: str

    def csrf_matches(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(sent.encode(), self.csrf_token.encode())


class PageSessions:
    """Open, find and close sessions in the shared values (in this process when none are given)."""

    def __init__(
        self,
        lifetime_s: float,
        values: SharedValues | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.lifetime_s = lifetime_s
        self._clock = clock
        self._values: SharedValues = values if values is not None else LocalValues()
        self._here = LocalValues()
        """Logins made while the shared values were unreachable: this replica's only."""

    async def open(self, credential: str, principal: str) -> tuple[str, PageSession]:
        """A new session: (the cookie value to send once, the session)."""
        cookie = secrets.token_urlsafe(32)
        session = PageSession(
            credential, secrets.token_urlsafe(32), self._clock() + self.lifetime_s, principal
        )
        sealed = _seal(cookie, session)
        try:
            await self._values.set(_key(cookie), sealed, ttl_s=self.lifetime_s)
        except SharedStateUnavailable:
            logger.warning("shared state unreachable: this page login is valid on this replica only")
            await self._here.set(_key(cookie), sealed, ttl_s=self.lifetime_s)
        return cookie, session

    async def find(self, cookie: str | None) -> PageSession | None:
        if not cookie:
            return None
        key = _key(cookie)
        try:
            sealed = await self._values.get(key)
        except SharedStateUnavailable:
            sealed = None
        if sealed is None:
            sealed = await self._here.get(key)
        session = _unseal(cookie, sealed) if sealed is not None else None
        if session is not None and session.expires_at <= self._clock():
            await self.close(cookie)
            return None
        return session

    async def close(self, cookie: str | None) -> None:
        if not cookie:
            return
        key = _key(cookie)
        await self._here.delete(key)
        try:
            await self._values.delete(key)
        except SharedStateUnavailable:
            logger.warning("shared state unreachable: a page logout could not end the shared session")


def _key(cookie: str) -> str:
    return _KEY_PREFIX + hashlib.sha256(_raw(cookie)).hexdigest()


def _raw(cookie: str) -> bytes:
    return cookie.encode("utf-8", "surrogatepass")


def _sealing_key(cookie: str) -> OctKey:
    """A key only the cookie's holder can derive; distinct from the digest that names the record."""
    return OctKey.import_key(hmac.new(_raw(cookie), b"colonnade page session seal", "sha256").digest())


def _seal(cookie: str, session: PageSession) -> bytes:
    return jwe.encrypt_compact(_SEAL, orjson.dumps(asdict(session)), _sealing_key(cookie)).encode("ascii")


def _unseal(cookie: str, sealed: bytes) -> PageSession | None:
    try:
        opened = jwe.decrypt_compact(sealed.decode("ascii"), _sealing_key(cookie)).plaintext
        fields = orjson.loads(opened or b"")
        return PageSession(
            str(fields["credential"]),
            str(fields["csrf_token"]),
            float(fields["expires_at"]),
            str(fields["principal"]),
        )
    except (JoseError, UnicodeDecodeError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        logger.warning("a page session record could not be opened; its visitor logs in again")
        return None
