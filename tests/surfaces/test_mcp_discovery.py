"""The meta tools `search_tools` and `describe_tool` through the official client, in both eras."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal, cast

import mcp_types as types
import pytest
from mcp import Client

from colonnade.adapters.discovery_tools import DESCRIBE_TOOL, SEARCH_TOOLS
from colonnade.catalog.tool import META_BUILTIN as META_TOOL_KEY
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from colonnade.surfaces.mcp.routing import ROUTING_META_KEY
from tests.support.authorizers import OnlyPrefix
from tests.surfaces.routing_stack import RoutedGateway, routed_gateway

MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


@pytest.fixture
async def routed(backend_url: str) -> AsyncIterator[RoutedGateway]:
    gateway = routed_gateway(backend_url)
    yield gateway
    await gateway.http.aclose()


@pytest.fixture
async def crm_only(backend_url: str) -> AsyncIterator[RoutedGateway]:
    """A caller allowed to call the CRM tools only."""
    gateway = routed_gateway(backend_url, authorizer=OnlyPrefix("acme:crm:"))
    yield gateway
    await gateway.http.aclose()


def routing(**fields: Any) -> types.RequestParamsMeta:
    return cast(types.RequestParamsMeta, {ROUTING_META_KEY: fields})


def output(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_code(result: types.CallToolResult) -> str:
    assert result.is_error is True
    return str(dict(result.meta or {})[RESULT_META_KEY]["error"]["code"])


@pytest.mark.parametrize("mode", MODES)
async def test_meta_tools_are_listed_once_read_only_with_schemas(
    routed: RoutedGateway, mode: Literal["auto", "legacy"]
) -> None:
    async with Client(routed.surface.server, mode=mode) as client:
        first = await client.list_tools(cache_mode="bypass")
        second = await client.list_tools(cursor=first.next_cursor, cache_mode="bypass")
    meta_tools = {t.name: t for t in first.tools if (t.meta or {}).get(META_TOOL_KEY)}
    assert set(meta_tools) == {SEARCH_TOOLS, DESCRIBE_TOOL}
    assert not any((t.meta or {}).get(META_TOOL_KEY) for t in second.tools)
    for tool in meta_tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    assert meta_tools[SEARCH_TOOLS].input_schema["required"] == ["query"]
    assert meta_tools[DESCRIBE_TOOL].input_schema["properties"]["name"]["type"] == "string"


@pytest.mark.parametrize("mode", MODES)
async def test_search_then_call_a_tool_that_was_never_listed(
    routed: RoutedGateway, mode: Literal["auto", "legacy"]
) -> None:
    async with Client(routed.surface.server, mode=mode) as client:
        await client.list_tools(meta=routing(query="void an open invoice"))
        found = output(await client.call_tool(SEARCH_TOOLS, {"query": "fetch one customer record", "k": 2}))
        assert len(found["tools"]) == 2
        card = found["tools"][0]
        assert card["name"] == "acme__crm__get_customer"
        assert card["canonical_name"] == "acme:crm:get_customer"
        assert card["side_effects"] == "read"
        assert card["summary"] == "Fetch one customer record by its customer id."
        assert "customer_id" in card["input_schema"]["properties"]
        assert card["score"] > 0 and card["reasons"][0].startswith("retrieval")
        assert found["query_used"] == "fetch one customer record" and 0 < found["confidence"] <= 1
        result = await client.call_tool(card["name"], {"customer_id": "C-1001"})
    assert output(result)["id"] == "C-1001"


@pytest.mark.parametrize("mode", MODES)
async def test_describe_tool_by_wire_or_canonical_name(
    routed: RoutedGateway, mode: Literal["auto", "legacy"]
) -> None:
    async with Client(routed.surface.server, mode=mode) as client:
        by_wire = output(await client.call_tool(DESCRIBE_TOOL, {"name": "acme__billing__void_invoice"}))
        by_canonical = output(await client.call_tool(DESCRIBE_TOOL, {"name": "acme:billing:void_invoice"}))
        missing = await client.call_tool(DESCRIBE_TOOL, {"name": "acme__billing__nothing"})
    assert by_wire == by_canonical
    assert by_wire["side_effects"] == "destructive" and by_wire["requires_human_approval"] is True
    assert by_wire["annotations"]["destructiveHint"] is True
    assert by_wire["intent"] and by_wire["version"] == "1.0.0"
    assert "invoice_id" in by_wire["input_schema"]["properties"]
    assert error_code(missing) == "I-REQ-UNKNOWN-TOOL"
    assert SEARCH_TOOLS in missing.content[0].text  # type: ignore[union-attr]


async def test_bad_arguments_are_schema_errors(routed: RoutedGateway) -> None:
    async with Client(routed.surface.server) as client:
        no_query = await client.call_tool(SEARCH_TOOLS, {"k": 3})
        bad_k = await client.call_tool(SEARCH_TOOLS, {"query": "invoice", "k": 0})
        extra = await client.call_tool(DESCRIBE_TOOL, {"name": "x", "verbose": True})
    for result in (no_query, bad_k, extra):
        assert error_code(result) == "I-REQ-SCHEMA"
    pointers = {
        v["pointer"] for v in dict(bad_k.meta or {})[RESULT_META_KEY]["error"]["details"]["violations"]
    }
    assert pointers == {"/k"}


@pytest.mark.parametrize("mode", MODES)
async def test_search_and_describe_show_only_what_the_caller_may_call(
    crm_only: RoutedGateway, mode: str
) -> None:
    async with Client(crm_only.surface.server, mode=mode) as client:
        found = output(await client.call_tool(SEARCH_TOOLS, {"query": "refund a paid invoice", "k": 10}))
        hidden = await client.call_tool(DESCRIBE_TOOL, {"name": "acme__billing__refund_invoice"})
        shown = await client.call_tool(DESCRIBE_TOOL, {"name": "acme__crm__get_customer"})
        routed = await client.list_tools(meta=routing(query="refund a paid invoice", k=10))
    assert found["tools"] and all(card["canonical_name"].startswith("acme:crm:") for card in found["tools"])
    assert error_code(hidden) == "I-REQ-UNKNOWN-TOOL"
    assert output(shown)["canonical_name"] == "acme:crm:get_customer"
    catalog_tools = [t.name for t in routed.tools if not (t.meta or {}).get(META_TOOL_KEY)]
    assert catalog_tools and all(name.startswith("acme__crm__") for name in catalog_tools)
