"""HTTP-backed and in-process tools side by side, through the official `mcp` client, in both eras.

The demo's contracts (CRM, billing) over the real demo backend, and the vault organ served from
its cards (imported on the first call), in one gateway: a client lists and calls both alike, and
the destructive `vault.delete` is approval-gated like `void_invoice`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from colonnade.catalog.catalog import Catalog
from colonnade.config import OrganSettings, Settings
from colonnade.runtime.gateway import Gateway
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.repo import ROOT
from tests.surfaces.conftest import demo_contract

MODES = ["auto", "legacy"]


@pytest.fixture
async def gateway(backend_url: str, tmp_path: Path) -> AsyncIterator[Gateway]:
    catalog = Catalog()
    for name in ("crm", "billing"):
        catalog.publish(demo_contract(name, backend_url))
    organs = OrganSettings(
        cards=[ROOT / "examples" / "organs" / "vault" / "cards"],
        tenant="acme",
        import_paths=[ROOT],
        pathways=[ROOT / "examples" / "organs" / "pathways.yaml"],
    )
    built = Gateway(Settings(data_dir=tmp_path, organs=organs), catalog=catalog)
    yield built
    await built.aclose()


def _envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict(dict(result.meta or {})[RESULT_META_KEY])


@pytest.mark.parametrize("mode", MODES)
async def test_contract_and_organ_tools_side_by_side(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.mcp.server, mode=mode) as client:  # type: ignore[arg-type]
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert len(tools) == 17  # 11 contract tools, 4 vault functions, 2 pathways
        store = tools["acme__vault__store"]
        assert (store.meta or {})["colonnade/canonical_name"] == "acme:vault:store"
        assert store.annotations is not None and store.annotations.read_only_hint is False
        delete = tools["acme__vault__delete"]
        assert delete.annotations is not None and delete.annotations.destructive_hint is True
        assert (delete.meta or {})["colonnade/requires_human_approval"] is True
        assert tools["acme__vault__similarity_search"].output_schema is not None

        customer = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
        stored = await client.call_tool(
            "acme__vault__store", {"key": f"{mode}.txt", "content": "overdue invoice"}
        )
        read = await client.call_tool("acme__vault__retrieve", {"key": f"{mode}.txt"})
        found = await client.call_tool("acme__vault__similarity_search", {"query": "invoice"})
    assert customer.is_error is False and stored.is_error is False and read.is_error is False
    assert (
        isinstance(read.structured_content, dict) and read.structured_content["content"] == "overdue invoice"
    )
    assert isinstance(found.structured_content, dict)
    assert f"{mode}.txt" in [m["key"] for m in found.structured_content["matches"]]
    envelope = _envelope(stored)
    assert envelope["provenance"]["tool_id"] == "acme:vault:store"
    assert envelope["metrics"]["cpu_ms"] > 0  # measured in-process
    assert "cpu_ms" not in _envelope(customer)["metrics"]  # an HTTP backend's CPU is its own


async def test_the_destructive_organ_function_is_approval_gated(gateway: Gateway) -> None:
    async with Client(gateway.mcp.server) as client:
        await client.call_tool("acme__vault__store", {"key": "keep.txt", "content": "x"})
        deleted = await client.call_tool("acme__vault__delete", {"key": "keep.txt"})
        pathway = await client.call_tool("acme__pathway__read_and_forget", {"key": "keep.txt"})
        still = await client.call_tool("acme__vault__retrieve", {"key": "keep.txt"})
    for gated in (deleted, pathway):
        assert gated.is_error is True
        assert _envelope(gated)["error"]["code"] == "P-PRECOND-APPROVAL-REQUIRED"
    assert still.is_error is False  # nothing was deleted


async def test_organ_errors_read_like_any_tool_error(gateway: Gateway) -> None:
    async with Client(gateway.mcp.server) as client:
        missing = await client.call_tool("acme__vault__retrieve", {"key": "never.txt"})
        invalid = await client.call_tool("acme__vault__store", {"key": "", "content": 1})
    assert missing.is_error is True
    text = missing.content[0]
    assert isinstance(text, types.TextContent)
    assert text.text.startswith("I-REQ-UPSTREAM-NOT-FOUND: the vault has no blob under the key 'never.txt'")
    assert _envelope(invalid)["error"]["code"] == "I-REQ-SCHEMA"
