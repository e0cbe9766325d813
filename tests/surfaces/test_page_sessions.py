"""The page session store on its own: random cookies, kept sealed by hash, ended by time or by logout."""

from __future__ import annotations

from colonnade.shared_state.values import LocalValues
from colonnade.surfaces.pages.login import safe_next
from colonnade.surfaces.pages.sessions import PageSessions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_session_is_found_by_its_cookie_until_it_expires() -> None:
    clock = Clock()
    values = LocalValues()
    sessions = PageSessions(60, values, clock=clock)
    cookie, session = await sessions.open("col_secret", "user:alice")
    assert await sessions.find(cookie) == session and session.principal == "user:alice"
    assert await sessions.find(cookie + "x") is None and await sessions.find(None) is None
    clock.now += 59.9
    assert await sessions.find(cookie) is not None
    clock.now += 0.2
    assert await sessions.find(cookie) is None and len(values) == 0


async def test_cookies_and_tokens_are_random_and_neither_cookie_nor_credential_is_stored() -> None:
    values = LocalValues()
    sessions = PageSessions(60, values)
    first, one = await sessions.open("col_a_credential", "user:a")
    second, two = await sessions.open("col_a_credential", "user:a")
    assert first != second and one.csrf_token != two.csrf_token and len(first) >= 43
    stored = repr(values._items)
    assert first not in stored and second not in stored
    assert "col_a_credential" not in stored and one.csrf_token not in stored


async def test_a_record_is_opened_only_with_its_own_cookie() -> None:
    values = LocalValues()
    sessions = PageSessions(60, values)
    first, _ = await sessions.open("col_a", "user:a")
    second, _ = await sessions.open("col_b", "user:b")
    first_key, second_key = list(values._items)
    values._items[first_key] = values._items[second_key]  # someone swaps the records in the store
    assert await sessions.find(first) is None
    assert (await sessions.find(second)) is not None


async def test_logout_closes_only_its_session() -> None:
    sessions = PageSessions(60)
    first, _ = await sessions.open("col_a", "user:a")
    second, _ = await sessions.open("col_b", "user:b")
    await sessions.close(first)
    assert await sessions.find(first) is None and await sessions.find(second) is not None


async def test_the_csrf_token_must_match_exactly() -> None:
    _, session = await PageSessions(60).open("col_a", "user:a")
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
