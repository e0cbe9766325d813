"""A path no route serves, or a method a route does not take: the typed envelope, or a page under /ui."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from colonnade.surfaces.pages.session_auth import is_page_path
from tests.surfaces.rest_harness import RunningGateway, demo_contract_file, gateway_settings, serve_gateway


@pytest.fixture(scope="module")
def client(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx2.Client]:
    folder = tmp_path_factory.mktemp("gateway")
    contracts = [demo_contract_file(folder, "crm", backend_url)]
    running: RunningGateway
    with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
        yield running.client


@pytest.mark.parametrize("path", ["/v1/nope", "/v1/tool", "/nope"])
def test_an_unknown_route_is_answered_with_the_error_envelope(client: httpx2.Client, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404 and answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["code"] == "I-REQ-UNKNOWN-ROUTE" and error["details"] == {"path": path}
    assert f"GET {path}" in error["message"] and "docs/rest-api.md" in error["fix"]


def test_a_wrong_method_is_answered_with_the_allowed_ones(client: httpx2.Client) -> None:
    answer = client.delete("/v1/calls")
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"
    error = answer.json()["error"]
    assert error["code"] == "I-REQ-METHOD" and error["details"]["allowed"] == ["POST"]
    assert error["message"] == "DELETE is not allowed on /v1/calls; use POST"


def test_an_unknown_page_is_a_page(client: httpx2.Client) -> None:
    answer = client.get("/ui/nope")
    assert answer.status_code == 404 and answer.headers["content-type"] == "text/html; charset=utf-8"
    assert "<h1>Page not found</h1>" in answer.text and 'href="/ui/catalog"' in answer.text
    assert "content-security-policy" in answer.headers


@pytest.mark.parametrize("path", ["/ui", "/ui/"])
def test_the_pages_root_leads_to_the_catalog(client: httpx2.Client, path: str) -> None:
    answer = client.get(path, follow_redirects=True)
    assert answer.status_code == 200 and answer.url.path == "/ui/catalog", (answer.status_code, answer.url)


def test_the_pages_root_is_a_page_path_a_login_returns_to() -> None:
    assert is_page_path("/ui") and is_page_path("/ui/") and is_page_path("/")
    assert not is_page_path("/uix") and not is_page_path("/v1/tools")
