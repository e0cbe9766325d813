"""A consumer's agent-facing listings show what it can call now: its subscribed APIs' tools only.

The held-out attack run found a consumer without a subscription listing every tool of its tenant
(destructive ones included) although it could call none. Now `tools/list` (both MCP eras),
`GET /v1/tools` and search show it nothing until it subscribes, then that API's tools; the catalog
page, where it chooses what to subscribe to, still shows its tenant's APIs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.governed import Governed, governed_gateway
from tests.support.page_login import person


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("consumer-listings")) as running:
        yield running


def _rest_tools(governed: Governed, token: str) -> set[str]:
    with governed.rest(token) as client:
        listed = client.get("/v1/tools", params={"limit": 200})
        found = client.get("/v1/search", params={"query": "read an item"})
    assert listed.status_code == 200 and found.status_code == 200, (listed.text, found.text)
    names = {tool["canonical_name"] for tool in listed.json()["tools"]}
    searched = {hit["canonical_name"] for hit in found.json()["tools"]}
    assert searched <= names, (searched, names)  # search ranks only what the listing shows
    return names


async def _mcp_tools(governed: Governed, token: str, mode: str) -> set[str]:
    """Every page of `tools/list`, the gateway's own tools left out."""
    names: set[str] = set()
    async with governed.mcp(token, mode=mode) as client:
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            names |= {str((t.meta or {}).get("colonnade/canonical_name")) for t in page.tools}
            cursor = page.next_cursor
            if not cursor:
                break
    return {name for name in names if not name.startswith("colonnade:")}


async def test_a_consumer_lists_nothing_until_it_subscribes_then_that_api(governed: Governed) -> None:
    token = governed.token("consumer", sub="newcomer")
    assert _rest_tools(governed, token) == set()
    for mode in ("auto", "legacy"):
        assert await _mcp_tools(governed, token, mode) == set()

    with governed.rest(token) as client:
        asked = client.post("/v1/subscriptions", json={"api": "acme:items"})
    assert asked.status_code == 201, asked.text
    governed.running.run(governed.running.gateway.governance.subscription_admin.refresh())  # type: ignore[union-attr]
    items = {f"acme:items:{op}" for op in ("read_item", "write_item", "drop_item", "audit_item")}
    assert _rest_tools(governed, token) == items
    for mode in ("auto", "legacy"):
        assert await _mcp_tools(governed, token, mode) == items


def test_the_catalog_page_still_shows_what_a_consumer_may_subscribe_to(governed: Governed) -> None:
    with person(governed, "browser", "consumer") as visitor:
        page = visitor.get("/ui/catalog")
    assert page.status_code == 200
    assert 'data-tool="acme:lab:read_item"' in page.text and 'data-tool="acme:items:read_item"' in page.text
