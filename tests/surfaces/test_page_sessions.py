"""The page session store on its own: random cookies, kept by hash, ended by time or by logout."""

from __future__ import annotations

from colonnade.surfaces.pages.login import safe_next
from colonnade.surfaces.pages.sessions import PageSessions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_is_found_by_its_cookie_until_it_expires() -> None:
    clock = Clock()
    sessions = PageSessions(60, clock=clock)
    cookie, session = sessions.open("col_secret", "user:alice")
    assert sessions.find(cookie) == session and session.principal == "user:alice"
    assert sessions.find(cookie + "x") is None and sessions.find(None) is None
    clock.now += 59.9
    assert sessions.find(cookie) is not None
    clock.now += 0.2
    assert sessions.find(cookie) is None and len(sessions) == 0


def test_cookies_and_tokens_are_random_and_the_cookie_is_not_stored() -> None:
    sessions = PageSessions(60)
    first, one = sessions.open("col_a", "user:a")
    second, two = sessions.open("col_a", "user:a")
    assert first != second and one.csrf_token != two.csrf_token and len(first) >= 43
    assert first not in repr(sessions._sessions) and second not in repr(sessions._sessions)


def test_logout_closes_only_its_session() -> None:
    sessions = PageSessions(60)
    first, _ = sessions.open("col_a", "user:a")
    second, _ = sessions.open("col_b", "user:b")
    sessions.close(first)
    assert sessions.find(first) is None and sessions.find(second) is not None


def test_the_csrf_token_must_match_exactly() -> None:
    _, session = PageSessions(60).open("col_a", "user:a")
    assert session.csrf_matches(session.csrf_token)
    assert not session.csrf_matches(None) and not session.csrf_matches("")
    assert not session.csrf_matches(session.csrf_token[:-1])


def test_after_login_only_pages_of_this_gateway() -> None:
    assert safe_next("/ui/audit?tool=a") == "/ui/audit?tool=a"
    for target in (
        None,
        "",
        "/",
        "//evil.example",
        "https://evil.example",
        "/v1/tools",
        "/ui/login",
        "/ui\\x",
    ):
        assert safe_next(target) == "/ui/catalog", target
