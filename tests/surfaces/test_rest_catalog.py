"""`GET /v1/tools` and `GET /v1/tools/{name}`: the catalog over REST, paging and typed 4xx errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from colonnade.catalog.catalog import Catalog
from tests.surfaces.rest_harness import RunningGateway, demo_contract_file, gateway_settings, serve_gateway

DEMO_TOOLS = 11


@pytest.fixture(scope="module")
def running(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    folder = tmp_path_factory.mktemp("gateway")
    contracts = [demo_contract_file(folder, name, backend_url) for name in ("crm", "billing")]
    with serve_gateway(gateway_settings(folder / "data", contracts, page_size=4)) as running:
        yield running


@pytest.fixture(scope="module")
def client(running: RunningGateway) -> httpx2.Client:
    return running.client


@pytest.fixture(scope="module")
def catalog(running: RunningGateway) -> Catalog:
    return running.gateway.catalog


def pages(client: httpx2.Client, **params: Any) -> list[list[dict[str, Any]]]:
    collected: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        response = client.get("/v1/tools", params={**params, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.text
        body = response.json()
        collected.append(body["tools"])
        cursor = body["next_cursor"]
        if cursor is None:
            return collected


def test_listing_pages_through_every_tool_in_canonical_order(client: httpx2.Client, catalog: Catalog) -> None:
    default = pages(client)
    assert [len(p) for p in default] == [4, 4, 3]
    tools = [t for page in default for t in page]
    assert [t["canonical_name"] for t in tools] == [t.canonical_name for t in catalog.tools()]
    assert len(tools) == DEMO_TOOLS
    assert [len(p) for p in pages(client, limit=5)] == [5, 5, 1]
    assert [t for page in pages(client, limit=100) for t in page] == tools


def test_listing_entries_are_short_and_complete(client: httpx2.Client) -> None:
    tools = {t["canonical_name"]: t for page in pages(client) for t in page}
    void = tools["acme:billing:void_invoice"]
    assert set(void) == {"canonical_name", "wire_name", "title", "version", "side_effects", "summary"}
    assert void["wire_name"] == "acme__billing__void_invoice"
    assert void["side_effects"] == "destructive"
    assert void["version"] == "1.0.0"
    assert void["summary"].startswith("Void")


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "1.5", "10001", "²"])
def test_bad_limits_are_typed_400s(client: httpx2.Client, limit: str) -> None:
    response = client.get("/v1/tools", params={"limit": limit})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "I-REQ-QUERY"
    assert error["details"]["parameter"] == "limit"
    assert error["fix"]


def test_a_cursor_the_gateway_never_handed_out_is_refused(client: httpx2.Client) -> None:
    response = client.get("/v1/tools", params={"cursor": "not-a-cursor!"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "I-REQ-CURSOR"
    assert "next_cursor" in error["fix"]


def test_detail_by_canonical_or_wire_name(client: httpx2.Client, catalog: Catalog) -> None:
    by_canonical = client.get("/v1/tools/acme:crm:get_customer")
    by_wire = client.get("/v1/tools/acme__crm__get_customer")
    assert by_canonical.status_code == by_wire.status_code == 200
    detail = by_canonical.json()
    assert detail == by_wire.json()
    tool = catalog.get("acme:crm:get_customer")
    assert tool is not None
    assert detail["digest"] == tool.digest
    assert detail["input_schema"]["required"] == ["customer_id"]
    assert detail["output_schema"] == tool.output_schema
    assert detail["annotations"]["read_only"] is True
    assert detail["_meta"]["colonnade/canonical_name"] == "acme:crm:get_customer"
    assert detail["_meta"]["colonnade/digest"] == tool.digest
    assert detail["llm"]["tool_name"] == "get_customer"
    assert detail["determinism"] == "idempotent"
    assert "base_url" not in by_canonical.text and "binding" not in detail


def test_unknown_tool_is_a_typed_404_that_suggests_names(client: httpx2.Client) -> None:
    response = client.get("/v1/tools/acme__crm__get_customers")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "I-REQ-UNKNOWN-TOOL"
    assert "GET /v1/tools" in error["fix"]
    assert error["details"]["did_you_mean"][0] == "acme__crm__get_customer"
    assert client.get("/v1/tools/zzz").json()["error"]["details"]["did_you_mean"] == []


def test_a_published_version_shows_up_without_a_restart(
    running: RunningGateway, backend_url: str, tmp_path: Path
) -> None:
    newer = demo_contract_file(tmp_path, "crm", backend_url, version="1.1.0")
    running.run(running.gateway.publish_files([newer]))
    detail = running.client.get("/v1/tools/acme:crm:get_customer").json()
    assert detail["version"] == "1.1.0"


def test_search_ranks_the_catalog_with_wire_names_scores_and_reasons(client: httpx2.Client) -> None:
    """`GET /v1/search`: what `colonnade tools search` asks a running gateway (routing need not be on)."""
    response = client.get("/v1/search", params={"query": "refund a paid invoice", "k": 3})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["query_used"] == "refund a paid invoice" and 0 < body["confidence"] <= 1
    assert [t["canonical_name"] for t in body["tools"]] == body["selected"]
    top = body["tools"][0]
    assert top["canonical_name"] == "acme:billing:refund_invoice"
    assert top["wire_name"] == "acme__billing__refund_invoice"
    assert top["score"] == body["scores"][top["canonical_name"]] and "refund" in top["reasons"][0]
    assert len(body["tools"]) == 3
    hinted = client.get(
        "/v1/search", params=[("query", "look up a customer"), ("k", "2"), ("domain", "billing")]
    )
    assert any("domain hint 'billing'" in " ".join(t["reasons"]) for t in hinted.json()["tools"])


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({}, "query"),
        ({"query": "  "}, "query"),
        ({"query": "refund", "k": "0"}, "k"),
        ({"query": "x", "k": "ten"}, "k"),
    ],
)
def test_search_refuses_a_missing_query_or_a_bad_k(
    client: httpx2.Client, params: dict[str, str], parameter: str
) -> None:
    response = client.get("/v1/search", params=params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "I-REQ-QUERY" and error["details"]["parameter"] == parameter
