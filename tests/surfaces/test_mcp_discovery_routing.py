"""Routed `tools/list` through the official client, in both eras: opt-in, memory per session,
always-on tools, and the list-change announcement when the conversation moves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal, cast

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from colonnade.adapters.discovery_tools import DESCRIBE_TOOL, SEARCH_TOOLS
from colonnade.config import RoutingSettings
from colonnade.surfaces.mcp.routing import ROUTING_META_KEY
from tests.surfaces.routing_stack import RoutedGateway, routed_gateway

MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]
META_TOOLS = [SEARCH_TOOLS, DESCRIBE_TOOL]


@pytest.fixture
async def routed(backend_url: str) -> AsyncIterator[RoutedGateway]:
    gateway = routed_gateway(
        backend_url, RoutingSettings(top_k=3, always_on_tools=["acme:crm:search_customers"])
    )
    yield gateway
    await gateway.http.aclose()


def routing(**fields: Any) -> types.RequestParamsMeta:
    return cast(types.RequestParamsMeta, {ROUTING_META_KEY: fields})


def names(result: types.ListToolsResult) -> list[str]:
    return [t.name for t in result.tools]


@pytest.mark.parametrize("mode", MODES)
async def test_routed_list_is_top_k_plus_always_on_tools(
    routed: RoutedGateway, mode: Literal["auto", "legacy"]
) -> None:
    async with Client(routed.surface.server, mode=mode) as client:
        full = await client.list_tools(cache_mode="bypass")
        listed = await client.list_tools(meta=routing(query="refund a paid invoice"))
    assert full.next_cursor is not None  # without the opt-in: the paginated catalog
    assert names(listed) == [
        "acme__crm__search_customers",  # always on
        "acme__billing__refund_invoice",
        "acme__billing__list_invoices",
        "acme__billing__void_invoice",
        *META_TOOLS,
    ]
    assert listed.next_cursor is None
    refund = listed.tools[1]
    assert (refund.meta or {})["colonnade/canonical_name"] == "acme:billing:refund_invoice"
    assert refund.annotations is not None and refund.annotations.destructive_hint is True


@pytest.mark.parametrize("mode", MODES)
async def test_messages_and_k_shape_the_list(routed: RoutedGateway, mode: Literal["auto", "legacy"]) -> None:
    messages = [
        {"role": "user", "content": "Refund invoice INV-2002 please."},
        {"role": "assistant", "content": "Done. Anything else?"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Check that ada@example.com is a valid e-mail address"}],
        },
    ]
    async with Client(routed.surface.server, mode=mode) as client:
        listed = await client.list_tools(meta=routing(messages=messages, k=1))
    assert names(listed) == ["acme__crm__search_customers", "acme__crm__validate_email_format", *META_TOOLS]


async def test_a_handshake_era_session_remembers_its_context(routed: RoutedGateway) -> None:
    async with Client(routed.surface.server, mode="legacy") as client:
        routed_list = await client.list_tools(meta=routing(query="void an open invoice"))
        again = await client.list_tools(cache_mode="bypass")
    async with Client(routed.surface.server, mode="legacy") as other:
        fresh = await other.list_tools(cache_mode="bypass")
    assert names(again) == names(routed_list)
    assert "acme__billing__void_invoice" in names(again)
    assert fresh.next_cursor is not None  # another connection has not opted in


async def test_stateless_clients_are_remembered_by_their_session_id(routed: RoutedGateway) -> None:
    async with Client(routed.surface.server) as client:
        routed_list = await client.list_tools(meta=routing(query="void an open invoice", session="agent-7"))
        plain = await client.list_tools(cache_mode="bypass")
        remembered = await client.list_tools(meta=routing(session="agent-7"))
    assert plain.next_cursor is not None  # 2026-07-28 is stateless: no session, no memory
    assert names(remembered) == names(routed_list)


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_outside_the_routed_list_can_still_be_called(
    routed: RoutedGateway, mode: Literal["auto", "legacy"]
) -> None:
    async with Client(routed.surface.server, mode=mode) as client:
        listed = await client.list_tools(meta=routing(query="void an open invoice"))
        assert "acme__crm__get_customer" not in names(listed)
        result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1002"})
    assert result.is_error is False
    assert isinstance(result.structured_content, dict) and result.structured_content["id"] == "C-1002"


async def test_legacy_clients_hear_when_the_conversation_moves(routed: RoutedGateway) -> None:
    heard: list[object] = []
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.append(message)
            changed.set()

    async with Client(routed.surface.server, mode="legacy", message_handler=on_message) as client:
        before = await client.list_tools(meta=routing(query="void an open invoice"))
        # a call within the same context that leaves the selection as it is: no announcement
        await client.call_tool("acme__billing__list_invoices", {}, meta=routing(query="void an open invoice"))
        await client.list_tools(meta=routing(query="void an open invoice"))
        assert heard == []
        moved = routing(messages=[{"role": "user", "content": "Check that an e-mail address is well formed"}])
        await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"}, meta=moved)
        with anyio.fail_after(5):
            await changed.wait()
        after = await client.list_tools(cache_mode="bypass")
    assert len(heard) == 1
    assert "acme__billing__void_invoice" in names(before)
    assert "acme__crm__validate_email_format" in names(after)
    assert "acme__billing__void_invoice" not in names(after)


async def test_modern_clients_hear_when_the_conversation_moves(routed: RoutedGateway) -> None:
    async with Client(routed.surface.server) as client, client.listen(tools_list_changed=True) as sub:
        await client.list_tools(meta=routing(query="void an open invoice", session="agent-9"))
        moved = routing(query="check that an e-mail address is well formed", session="agent-9")
        await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"}, meta=moved)
        with anyio.fail_after(5):
            event = await sub.__anext__()
        after = await client.list_tools(meta=routing(session="agent-9"))
    assert type(event).__name__ == "ToolsListChanged"
    assert "acme__crm__validate_email_format" in names(after)


async def test_successful_calls_teach_the_router(routed: RoutedGateway) -> None:
    async with Client(routed.surface.server, mode="legacy") as client:
        await client.list_tools(meta=routing(query="find a customer"))
        await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
        await client.call_tool("acme__billing__list_invoices", {"customer_id": "C-1001"})
        await client.call_tool("acme__crm__get_customer", {"customer_id": "C-9999"})  # fails: not learned
    learned = routed.feedback.learned
    assert learned.affinity("acme:crm:get_customer", "acme:billing:list_invoices") == 0.5
    assert len(learned) == 2


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (cast(types.RequestParamsMeta, {ROUTING_META_KEY: "invoices"}), "must be an object"),
        (routing(query=""), "query must be a non-empty string"),
        (routing(query="x", messages=[]), "either query or messages"),
        (routing(messages=[{"content": "hi"}]), "messages must be a list"),
        (routing(query="x", k=0), "k must be an integer from 1 to 200"),
        (routing(query="x", colour="red"), "unknown field"),
    ],
)
async def test_malformed_routing_meta_is_refused_with_a_reason(
    routed: RoutedGateway, meta: types.RequestParamsMeta, message: str
) -> None:
    async with Client(routed.surface.server) as client:
        with pytest.raises(MCPError, match=message):
            await client.list_tools(meta=meta)
