"""The pages in a real browser (headless Chromium): log in through the form, look, log out.

A governed gateway on loopback (test issuer, store, backend); Chromium keeps the session cookie
and sends the forms exactly as a person's browser would, CSRF tokens and Origin headers included.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.support import browser as browser_support
from tests.support.browser import chromium, png_size
from tests.support.governed import Governed, governed_gateway
from tests.support.loopback import serve_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("pages-browser")) as running:
        status, body = running.call(running.token("admin"), "acme:items:read_item", item_id="seen-in-audit")
        assert status == 200, body
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from chromium()


WINDOW = {"width": 1280, "height": 800}
"""A laptop's browser window: the pages must fit its width (a full-page screenshot is no wider)."""


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=WINDOW)
    try:
        yield context.new_page()
    finally:
        context.close()


def log_in(page: Page, governed: Governed, credential: str) -> None:
    page.goto(f"{governed.base_url}/ui/catalog")
    assert page.url.startswith(f"{governed.base_url}/ui/login?next=")
    page.fill("#credential", credential)
    page.click("#login")


def test_log_in_see_the_catalog_and_the_audit_then_log_out(page: Page, governed: Governed) -> None:
    log_in(page, governed, governed.token("admin", tenant=None, sub="ops"))
    assert page.url == f"{governed.base_url}/ui/catalog"
    assert page.inner_text("#visitor") == "user:ops"
    assert page.locator('tr[data-tool="acme:items:read_item"]').count() == 1
    cookie = next(c for c in page.context.cookies() if c["name"] == "colonnade_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"

    page.click("header >> text=Audit")
    assert page.url == f"{governed.base_url}/ui/audit"
    assert "Chain intact" in page.inner_text("#chain")
    assert page.locator('#audit tr[data-kind="call"]').count() >= 1
    page.fill('input[name="tool"]', "acme:items:read_item")
    page.click("form.filters button")
    assert "tool=acme%3Aitems%3Aread_item" in page.url
    rows = page.locator("#audit tbody tr")
    assert rows.count() >= 1
    assert all("acme:items:read_item" in text for text in rows.all_inner_texts())

    page.click("#logout")
    assert page.url == f"{governed.base_url}/ui/login?out=1"
    assert "You are logged out" in page.inner_text("#notice")
    page.goto(f"{governed.base_url}/ui/audit")
    assert page.url.startswith(f"{governed.base_url}/ui/login?next=%2Fui%2Faudit")


def test_a_wrong_key_shows_the_error_and_stays_on_the_login_page(page: Page, governed: Governed) -> None:
    log_in(page, governed, "col_0123456789ab_" + "x" * 43)
    assert page.url == f"{governed.base_url}/ui/login"
    error = page.inner_text("#error")
    assert "That credential was refused" in error and "(A-AUTH-API-KEY)" in error
    assert not [c for c in page.context.cookies() if c["name"] == "colonnade_session"]


def test_a_form_posted_from_another_page_is_refused(page: Page, governed: Governed) -> None:
    """A page on another loopback port is the same site for cookies (SameSite sends the session
    cookie) and an allowed Origin on a loopback gateway: the synchronizer token is what refuses it."""
    log_in(page, governed, governed.token("admin"))
    target = f"{governed.base_url}/ui/logout"

    async def forged(_: Request) -> HTMLResponse:
        form = f'<form method="post" action="{target}"><button id="go">win a prize</button></form>'
        return HTMLResponse(f"<!DOCTYPE html><html><body>{form}</body></html>")

    with serve_in_thread(Starlette(routes=[Route("/", forged)])) as other_site:
        page.goto(other_site)
        page.click("#go")
        assert page.url == target
        assert "A-AUTH-CSRF" in page.inner_text("#error")
    page.goto(f"{governed.base_url}/ui/catalog")
    assert page.url == f"{governed.base_url}/ui/catalog"  # still logged in


DROP = "acme:items:drop_item"


def ask_for_a_drop(governed: Governed, item: str) -> str:
    """Alice asks (over REST) for a destructive call; it waits for an approver."""
    status, result = governed.call(governed.token("admin", sub="alice"), DROP, item_id=item)
    assert status == 200 and result["status"] == "pending", result
    return str(result["pending"]["token"])


def drops(governed: Governed, item: str) -> int:
    return sum(1 for e in governed.effects() if e["kind"] == "drop" and e["item_id"] == item)


def test_an_approver_approves_a_pending_call_and_it_runs(page: Page, governed: Governed) -> None:
    approval = ask_for_a_drop(governed, "B-1")
    log_in(page, governed, governed.token("admin", sub="bob"))
    page.click("header >> text=Approvals")
    card = page.locator(f'section[data-approval="{approval}"]')
    assert card.get_attribute("data-state") == "pending"
    assert '"item_id": "B-1"' in card.locator("pre.arguments").inner_text()
    assert "user:alice" in card.inner_text()
    assert drops(governed, "B-1") == 0

    assert card.locator('input[name="comment"]').count() == 1
    run_now = card.locator('input[name="run"]')
    assert not run_now.is_checked()  # one click on Approve never runs a destructive call
    card.locator('input[name="comment"]').fill("old test item, fine")
    run_now.check()
    card.locator("button.approve").click()
    assert page.url == f"{governed.base_url}/ui/approvals/{approval}?done=ran"  # redirected after the post
    assert "The call ran: success" in page.inner_text("#call-result")
    assert '"status": "success"' in page.inner_text("#call-envelope")
    decided = page.locator(f'section[data-approval="{approval}"]')
    assert decided.get_attribute("data-state") == "used"
    assert "old test item, fine" in decided.inner_text()
    assert drops(governed, "B-1") == 1
    shot = page.screenshot(full_page=True)
    assert png_size(shot)[0] == WINDOW["width"]  # no sideways scroll
    envelope = page.locator("#call-envelope").bounding_box()
    assert envelope is not None and envelope["height"] > 40 and envelope["x"] + envelope["width"] <= 1280
    page.reload()  # the page after the redirect: reloading it posts nothing again
    assert drops(governed, "B-1") == 1


def test_approving_without_ticking_run_runs_nothing(page: Page, governed: Governed) -> None:
    approval = ask_for_a_drop(governed, "B-3")
    log_in(page, governed, governed.token("admin", sub="bob"))
    page.goto(f"{governed.base_url}/ui/approvals")
    page.locator(f'section[data-approval="{approval}"] button.approve').click()
    assert page.url == f"{governed.base_url}/ui/approvals/{approval}?done=approved"
    assert page.locator(f'section[data-approval="{approval}"]').get_attribute("data-state") == "approved"
    assert page.locator("#call-result").count() == 0 and drops(governed, "B-3") == 0


def test_an_approver_denies_a_pending_call_and_nothing_runs(page: Page, governed: Governed) -> None:
    approval = ask_for_a_drop(governed, "B-2")
    log_in(page, governed, governed.token("admin", sub="bob"))
    page.goto(f"{governed.base_url}/ui/approvals")
    card = page.locator(f'section[data-approval="{approval}"]')
    card.locator('input[name="comment"]').fill("not this one")
    card.locator("button.deny").click()
    assert page.url == f"{governed.base_url}/ui/approvals/{approval}?done=denied"
    assert page.inner_text("#notice") == "Denied."
    assert "not this one" in page.inner_text(f'section[data-approval="{approval}"]')
    assert page.locator(f'section[data-approval="{approval}"]').get_attribute("data-state") == "denied"
    page.goto(f"{governed.base_url}/ui/approvals")
    assert page.locator(f'section[data-approval="{approval}"]').count() == 0  # no longer pending
    assert drops(governed, "B-2") == 0


def test_the_audit_page_fits_a_1280_px_window_with_details_folded(page: Page, governed: Governed) -> None:
    """Approval records carry long details: folded, in readable columns, and nothing scrolls sideways."""
    approval = ask_for_a_drop(governed, "B-audit")
    log_in(page, governed, governed.token("admin", sub="bob"))
    page.goto(f"{governed.base_url}/ui/approvals/{approval}")
    page.locator(f'section[data-approval="{approval}"] input[name="run"]').check()
    page.locator(f'section[data-approval="{approval}"] button.approve').click()
    page.goto(f"{governed.base_url}/ui/audit")
    rows = page.locator("#audit tbody tr")
    assert page.locator('#audit tr[data-kind="approval.approve"]').count() >= 1
    shot = page.screenshot(full_page=True)
    width, height = png_size(shot)
    assert width == WINDOW["width"], f"the audit page is {width} px wide in a {WINDOW['width']} px window"
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= WINDOW["width"], scroll
    tallest = max(box["height"] for box in (rows.nth(i).bounding_box() for i in range(rows.count())) if box)
    assert tallest < 90, f"a row is {tallest:.0f} px tall: its details should be folded"
    folded = page.locator('#audit tr[data-kind="approval.approve"] details.details').first
    assert folded.count() == 1 and folded.get_attribute("open") is None
    assert not folded.locator("pre").is_visible()
    folded.locator("summary").click()  # unfolded on demand, still within the window
    assert folded.get_attribute("open") is not None and folded.locator("pre").is_visible()
    assert folded.locator("pre").inner_text().lstrip().startswith("{")
    assert page.evaluate("document.documentElement.scrollWidth") <= WINDOW["width"]
    assert height > 0


def test_without_chromium_the_browser_tests_skip_and_say_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(browser_support, "CHROMIUM", tmp_path / "chromium")
    with pytest.raises(pytest.skip.Exception, match=r"could not be installed .*make browser"):
        next(chromium())


def test_make_and_revoke_a_key_register_an_agent_and_try_a_tool(page: Page, governed: Governed) -> None:
    """The acting pages as a person uses them: every form sent by the browser, its CSRF token included."""
    log_in(page, governed, governed.token("admin", sub="alice"))
    page.click("header >> text=Access")
    assert page.url == f"{governed.base_url}/ui/access"
    page.fill('#create-key input[name="owner"]', "browser-user")
    page.select_option('#create-key select[name="persona"]', "developer")
    page.click("#create-key button")
    assert page.url == f"{governed.base_url}/ui/access?done=key-created"
    secret = page.inner_text("#new-key").strip()
    with governed.rest(secret) as client:
        assert client.get("/v1/tools").status_code == 200
    row = page.locator("tr[data-key]", has_text="browser-user").last
    row.locator("button", has_text="Revoke").click()
    assert page.url.endswith("done=key-revoked")
    with governed.rest(secret) as client:
        assert client.get("/v1/tools").status_code == 401

    page.fill('#register-agent input[name="agent_id"]', "browser-bot")
    page.fill('#register-agent input[name="allowed_tools"]', "acme:items:read_item")
    page.click("#register-agent button")
    assert page.locator('tr[data-agent="browser-bot"]').count() == 1

    page.goto(f"{governed.base_url}/ui/tools/acme:items:read_item")
    page.fill('#try textarea[name="arguments"]', '{"item_id": "I-1"}')
    page.click("#try button")
    assert page.get_attribute("#call-result", "data-status") == "success"
    assert '"value": "one"' in page.inner_text("#call-envelope")
