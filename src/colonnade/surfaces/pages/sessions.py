"""Page sessions: a person logs in once with a credential, then the browser sends a random cookie.

The cookie is a random id (256 bits); the gateway keeps, in memory and keyed by the id's SHA-256,
the credential it stands for, the session's CSRF token and its expiry. Every page request
authenticates the kept credential again, so a revoked key or an expired token ends the session at
once. Sessions live in one process: a restart, or a request reaching another replica, asks the
person to log in again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SESSION_COOKIE", "SESSION_COOKIE_PATH", "PageSession", "PageSessions"]

SESSION_COOKIE = "colonnade_session"
SESSION_COOKIE_PATH = "/ui"
"""The cookie goes to the pages only: REST, MCP and `/metrics` never receive it."""
_MAX_SESSIONS = 10_000


@dataclass(frozen=True, slots=True)
class PageSession:
    """One logged-in browser: the credential it stands for and the token its forms must carry."""

    credential: str
    csrf_token: str
    expires_at: float
    principal: str

    def csrf_matches(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(sent.encode(), self.csrf_token.encode())


class PageSessions:
    """Open, find and close sessions; expired ones are dropped when met, and the oldest beyond a cap."""

    def __init__(self, lifetime_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.lifetime_s = lifetime_s
        self._clock = clock
        self._sessions: dict[str, PageSession] = {}

    def open(self, credential: str, principal: str) -> tuple[str, PageSession]:
        """A new session: (the cookie value to send once, the session)."""
        self._drop_expired()
        while len(self._sessions) >= _MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        cookie = secrets.token_urlsafe(32)
        session = PageSession(
            credential, secrets.token_urlsafe(32), self._clock() + self.lifetime_s, principal
        )
        self._sessions[_digest(cookie)] = session
        return cookie, session

    def find(self, cookie: str | None) -> PageSession | None:
        if not cookie:
            return None
        key = _digest(cookie)
        session = self._sessions.get(key)
        if session is not None and session.expires_at <= self._clock():
            del self._sessions[key]
            return None
        return session

    def close(self, cookie: str | None) -> None:
        if cookie:
            self._sessions.pop(_digest(cookie), None)

    def __len__(self) -> int:
        return len(self._sessions)

    def _drop_expired(self) -> None:
        now = self._clock()
        for key in [key for key, session in self._sessions.items() if session.expires_at <= now]:
            del self._sessions[key]


def _digest(cookie: str) -> str:
    return hashlib.sha256(cookie.encode("utf-8", "surrogatepass")).hexdigest()
