"""The charts of `/ui/metrics` and `/ui/usage` in headless Chromium, after real calls to the loopback backend.

A governed gateway (test issuer, SQLite store, fault backend) writes its metrics history every
0.2 s; the test looks at the drawn chart (its screenshot has the line's colour, not only the
background and the axes), at the SVG (axis labels, a line through several points), restarts the
gateway on the same database and finds the calls still charted. Two consumers each see only their
own calls on the usage page; an admin sees both and can pick one.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.support.browser import chromium, png_pixels
from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import person

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

READ = "acme:items:read_item"
LINE = (0x2F, 0x5F, 0xB3)
"""The first series' colour (svg_chart.PALETTE[0])."""
WINDOW = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from chromium()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=WINDOW)
    try:
        yield context.new_page()
    finally:
        context.close()


def log_in(page: Page, governed: Governed, credential: str, path: str) -> None:
    page.goto(f"{governed.base_url}{path}")
    page.fill("#credential", credential)
    page.click("#login")
    assert page.url.startswith(f"{governed.base_url}{path}"), page.url


def eventually(check: Callable[[], bool], what: str, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"not within {within_s} s: {what}"
        time.sleep(0.2)


def charted_calls(governed: Governed) -> int:
    """The calls the metrics page's history counts (-1 when it shows no history)."""
    with person(governed, "ops", tenant=None) as client:
        body = client.get("/ui/metrics").text
    found = re.search(r'id="history-calls">(\d+) calls', body)
    return int(found.group(1)) if found else -1


def drawn(page: Page, selector: str) -> tuple[int, int]:
    """(pixels that are not white, pixels close to the first line's colour) of an element's screenshot."""
    pixels = png_pixels(page.locator(selector).screenshot())
    inked = sum(1 for p in pixels if p != (255, 255, 255))
    lined = sum(1 for p in pixels if all(abs(c - want) <= 40 for c, want in zip(p, LINE, strict=True)))
    return inked, lined


def line_points(page: Page, selector: str) -> int:
    """The most points of one path of the chart's lines (`M x,y L x,y ...`)."""
    paths = page.locator(f"{selector} path.line")
    return max(
        (
            len(re.findall(r"[ML]", d or ""))
            for d in (paths.nth(i).get_attribute("d") for i in range(paths.count()))
        ),
        default=0,
    )


def heights(page: Page, selector: str) -> int:
    """How many different heights the chart's first line reaches (1: a flat line, nothing measured)."""
    d = page.locator(f"{selector} path.line").first.get_attribute("d") or ""
    return len({y for y in re.findall(r"[ML][\d.]+,([\d.]+)", d)})


def test_the_metrics_chart_shows_the_calls_and_still_does_after_a_restart(page: Page, tmp_path: Path) -> None:
    with governed_gateway(tmp_path, telemetry={"history_flush_s": 0.2}) as governed:
        admin = governed.token("admin")
        for _ in range(6):
            status, body = governed.call(admin, READ, item_id="I-1")
            assert status == 200 and body["status"] == "success", body
        status, body = governed.call(admin, READ)  # no item_id: an invalid request, an error in the chart
        assert body["status"] == "invalid_request", body
        eventually(lambda: charted_calls(governed) >= 7, "the history holds the 7 calls")

        log_in(page, governed, governed.token("admin", tenant=None, sub="ops"), "/ui/metrics")
        chart = "#chart-calls"
        assert page.locator(f"{chart} .x-label").text_content() == "time (UTC)"
        assert page.locator(f"{chart} .y-label").text_content() == "calls/s"
        assert page.locator(f"{chart} .x-tick").count() >= 3 and page.locator(f"{chart} .y-tick").count() >= 3
        assert line_points(page, chart) >= 30  # a minute bucket per point over the hour
        assert heights(page, chart) >= 2  # the calls rise above the floor
        inked, lined = drawn(page, chart)
        assert inked > 2000 and lined > 200, (inked, lined)
        assert page.locator("#chart-latency path.line").count() >= 2  # p50 and p95
        assert page.locator("#chart-errors circle.dot, #chart-errors path.line").count() >= 1
        assert page.locator(f'#history-tools tr[data-subject="{READ}"]').count() == 1
        page.click(f'#history-tools tr[data-subject="{READ}"] a')
        assert READ in page.inner_text("#history h2")
        page.click("#window-day")
        assert page.locator("#history").get_attribute("data-window") == "day"
        assert page.locator("#chart-calls").get_attribute("data-points") == "288"
        page.context.clear_cookies()

        governed.restart()
        log_in(page, governed, governed.token("admin", tenant=None, sub="ops"), "/ui/metrics")
        assert page.inner_text("#history-calls").startswith("7 calls"), page.inner_text("#history-calls")
        assert page.locator("#no-calls").count() == 1  # this process has served none
        inked, lined = drawn(page, "#chart-calls")
        assert lined > 200 and heights(page, "#chart-calls") >= 2, (inked, lined)


def subscribe(governed: Governed, token: str) -> None:
    with governed.rest(token) as client:
        answer = client.post("/v1/subscriptions", json={"api": "acme:items"})
    assert answer.status_code in (200, 201) and answer.json()["subscription"]["state"] == "active", (
        answer.text
    )


def test_a_consumer_sees_only_its_own_calls_and_an_admin_sees_everyones(page: Page, tmp_path: Path) -> None:
    with governed_gateway(tmp_path, telemetry={"history_flush_s": 0.2}) as governed:
        erin, frank = governed.token("consumer", sub="erin"), governed.token("consumer", sub="frank")
        for token in (erin, frank):
            subscribe(governed, token)
        for _ in range(3):
            assert governed.call(erin, READ, item_id="I-1")[1]["status"] == "success"
        for _ in range(2):
            assert governed.call(frank, READ, item_id="I-2")[1]["status"] == "success"
        assert governed.call(frank, READ)[1]["status"] == "invalid_request"

        log_in(page, governed, erin, "/ui/usage")
        assert page.inner_text("#usage-calls") == "3"
        consumers = page.locator("#usage-recent tbody tr")
        assert consumers.count() == 3
        assert {consumers.nth(i).get_attribute("data-consumer") for i in range(3)} == {"user:erin"}
        assert page.locator("#consumer-filter").count() == 0
        assert page.locator('#usage-subscriptions td:text-is("acme:items")').count() == 1
        assert page.locator("#usage-chart-calls .x-label").text_content() == "time (UTC)"
        assert line_points(page, "#usage-chart-calls") >= 30 and heights(page, "#usage-chart-calls") >= 2
        _, lined = drawn(page, "#usage-chart-calls")
        assert lined > 100, lined
        page.goto(
            f"{governed.base_url}/ui/usage?consumer=user:frank"
        )  # asking for another's: still one's own
        assert page.inner_text("#usage-calls") == "3"
        assert "frank" not in page.inner_text("main")
        page.context.clear_cookies()

        log_in(page, governed, frank, "/ui/usage")
        assert page.inner_text("#usage-calls") == "3" and page.inner_text("#usage-errors") == "1"
        assert "erin" not in page.inner_text("main")
        page.context.clear_cookies()

        log_in(page, governed, governed.token("admin", sub="ada"), "/ui/usage")
        assert page.inner_text("#usage-calls") == "6"
        assert page.locator("#consumer-filter").count() == 1
        page.fill('#consumer-filter input[name="consumer"]', "user:frank")
        page.click("#consumer-filter button")
        assert "consumer=user%3Afrank" in page.url
        rows = page.locator("#usage-recent tbody tr")
        assert rows.count() == 3
        assert {rows.nth(i).get_attribute("data-consumer") for i in range(3)} == {"user:frank"}
