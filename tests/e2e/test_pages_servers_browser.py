"""Adding and removing a downstream server on `/ui/servers` in headless Chromium, as a person does.

The forms are sent by the browser (the CSRF token included); the server added is the conformance
reference server over HTTP, and its tools reach the catalog.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.support.browser import chromium
from tests.support.governed import Governed, governed_gateway
from tests.support.machine_load import patient
from tests.support.mcp_servers import reference_http

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with reference_http(tmp_path_factory.mktemp("ref") / "reference.log") as url:
        yield url


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    tmp: Path = tmp_path_factory.mktemp("pages-servers-browser")
    with governed_gateway(tmp, server={"admin_api": True}) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from chromium()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


def _served(governed: Governed, server: str) -> int:
    tools = governed.running.gateway.catalog.tools()
    return sum(1 for tool in tools if tool.canonical_name.startswith(f"acme:{server}:"))


def test_add_a_server_then_remove_it_through_the_page(page: Page, governed: Governed, reference: str) -> None:
    page.goto(f"{governed.base_url}/ui/servers")
    page.fill("#credential", governed.token("admin", sub="alice"))
    page.click("#login")
    assert page.url.startswith(f"{governed.base_url}/ui/servers")
    page.fill('#add-server input[name="name"]', "ref")
    page.select_option('#add-server select[name="transport"]', "http")
    page.fill('#add-server input[name="url"]', reference)
    page.fill('#add-server input[name="tenant"]', "acme")
    page.click("#add-server button")
    assert page.url == f"{governed.base_url}/ui/servers?done=added"
    assert page.locator('tr[data-server="ref"]').count() == 1
    deadline = time.monotonic() + patient(30)
    while _served(governed, "ref") == 0:  # the server's tools reach the catalog once it is listed
        assert time.monotonic() < deadline, "the added server's tools never reached the catalog"
        time.sleep(0.1)
    page.locator('tr[data-server="ref"] button', has_text="Remove").click()
    assert page.url.startswith(f"{governed.base_url}/ui/servers?done=")
    assert page.locator('tr[data-server="ref"]').count() == 0
