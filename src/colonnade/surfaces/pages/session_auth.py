"""The edge's authenticator, taught to read the page session cookie on page routes, and only there.

A page request without an `Authorization` or `X-API-Key` header but with a session cookie is
authenticated with the credential the session stands for, by the very authenticator every other
request meets (same checks, same route scopes, same audit of refusals). REST, MCP, `/metrics` and
every other route never look at the cookie: a cookie there would let any site a person visits
send calls in their name (CSRF). The login page itself is let through as an anonymous visitor,
after the edge's Host and Origin checks.
"""

from __future__ import annotations

from dataclasses import replace
from http.cookies import CookieError, SimpleCookie

from starlette.datastructures import Headers
from starlette.types import Scope

from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal
from colonnade.surfaces.edge import Authenticator, EdgeRefusal
from colonnade.surfaces.pages.layout import LOGIN_PATH
from colonnade.surfaces.pages.sessions import SESSION_COOKIE, PageSession, PageSessions

__all__ = ["SESSION_KEY", "is_page_path", "session_cookie", "session_of_scope", "with_page_sessions"]

SESSION_KEY = "colonnade.page_session"
_PAGE_PREFIX = "/ui/"


def is_page_path(path: str) -> bool:
    """The routes a browser session may open: `/`, `/ui` and everything under `/ui/`."""
    return path in ("/", _PAGE_PREFIX.rstrip("/")) or path.startswith(_PAGE_PREFIX)


def session_cookie(headers: Headers) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return None
    morsel = jar.get(SESSION_COOKIE)
    return morsel.value if morsel is not None else None


def session_of_scope(scope: Scope) -> tuple[str, PageSession] | None:
    """(cookie, session) when the edge let this request in by its page session."""
    state = scope.get("state")
    found = state.get(SESSION_KEY) if isinstance(state, dict) else None
    return found if isinstance(found, tuple) else None


def with_page_sessions(authenticate: Authenticator, sessions: PageSessions) -> Authenticator:
    async def authenticate_with_session(headers: Headers, scope: Scope) -> Principal | EdgeRefusal:
        path = scope["path"]
        if not is_page_path(path) or "authorization" in headers or "x-api-key" in headers:
            return await authenticate(headers, scope)
        if path == LOGIN_PATH:
            return ANONYMOUS_LOOPBACK
        cookie = session_cookie(headers)
        session = await sessions.find(cookie)
        if cookie is None or session is None:
            return await authenticate(headers, scope)
        raw = [(k, v) for k, v in headers.raw if k not in (b"cookie", b"authorization")]
        raw.append((b"authorization", f"Bearer {session.credential}".encode("latin-1")))
        outcome = await authenticate(Headers(raw=raw), scope)
        if isinstance(outcome, Principal):
            scope.setdefault("state", {})[SESSION_KEY] = (cookie, session)
        elif outcome.http_status == 401:  # the credential no longer holds: the session is over
            await sessions.close(cookie)
            return replace(outcome, details={**outcome.details, "session": "ended"})
        return outcome

    return authenticate_with_session
