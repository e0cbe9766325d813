"""The MCP surface through the official `mcp` client, in both protocol eras (in-process transport)."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.mcp_client import all_tools
from tests.surfaces.conftest import Gateway, demo_contract

MODES = ["auto", "legacy"]
STRICT = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def result_of(result: types.CallToolResult) -> dict[str, Any]:
    meta: dict[str, Any] = dict(result.meta or {})
    return dict(meta[RESULT_META_KEY])


@pytest.mark.parametrize("mode", MODES)
async def test_lists_every_tool_across_pages_in_a_stable_order(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.surface.server, mode=mode) as client:  # type: ignore[arg-type]
        first = await all_tools(client)
        second = await all_tools(client)
    names = [t.name for t in first]
    assert names == [t.name for t in second]
    assert len(names) == len(set(names)) == 11
    assert all(STRICT.match(n) for n in names)
    canonical = [str((t.meta or {})["colonnade/canonical_name"]) for t in first]
    assert canonical == sorted(canonical)
    assert "acme__crm__search_customers" in names


@pytest.mark.parametrize("mode", MODES)
async def test_projection_is_visible_to_clients(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.surface.server, mode=mode) as client:  # type: ignore[arg-type]
        tools = {t.name: t for t in await all_tools(client)}
    void = tools["acme__billing__void_invoice"]
    assert void.annotations is not None and void.annotations.destructive_hint is True
    assert void.annotations.read_only_hint is False
    assert (void.meta or {})["colonnade/requires_human_approval"] is True
    search = tools["acme__crm__search_customers"]
    assert search.annotations is not None and search.annotations.read_only_hint is True
    assert "x-in" not in json.dumps(tools["acme__billing__create_invoice"].input_schema)


@pytest.mark.parametrize("mode", MODES)
async def test_read_call_returns_structured_content_and_json_text(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.surface.server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
    assert result.is_error is False
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["id"] == "C-1001"
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    envelope = result_of(result)
    assert envelope["status"] == "success"
    assert envelope["provenance"]["tool_id"] == "acme:crm:get_customer"
    assert envelope["metrics"]["duration_ms"] >= 0
    # 2026-07-28 results name the server (the surface stamps it once, not the SDK per response).
    stamp = (result.meta or {}).get(types.SERVER_INFO_META_KEY)
    assert (stamp or {}).get("name") == ("colonnade" if mode == "auto" else None)


async def test_no_sdk_span_per_request_without_a_recording_tracer(gateway: Gateway) -> None:
    """The gateway records no spans here and no global tracer provider is installed: the SDK's
    span middleware is gone; a surface told that spans are recorded keeps it."""
    from mcp.server._otel import OpenTelemetryMiddleware

    from colonnade.surfaces.mcp.server import McpSurface

    def spans(surface: McpSurface) -> bool:
        return any(isinstance(layer, OpenTelemetryMiddleware) for layer in surface.server.middleware)

    assert not spans(gateway.surface)
    assert spans(McpSurface(gateway.surface.catalog, gateway.surface.calls, sdk_spans=True))


# The endpoint's twin server declares the (deprecated at 2026-07-28) logging capability on purpose.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_no_sdk_span_per_request_on_a_servers_endpoint_either(gateway: Gateway) -> None:
    """`/servers/{name}/mcp` as `/mcp`: the gateway's endpoint drops the SDK's span middleware when
    the gateway records no spans; one told that spans are recorded keeps it."""
    from mcp.server._otel import OpenTelemetryMiddleware

    from colonnade.adapters.mcp.pool import McpPool
    from colonnade.adapters.mcp.upstream import Upstream
    from colonnade.config import McpServerSettings
    from colonnade.governance.authorization import AllowAll
    from colonnade.surfaces.mcp.proxy.endpoint import UpstreamEndpoint

    upstream = Upstream(McpServerSettings(name="far", transport="http", url="http://127.0.0.1:9/mcp"))

    def spans(recorded: bool) -> bool:
        endpoint = UpstreamEndpoint(
            upstream, McpPool(), gateway.surface.calls, authorizer=AllowAll(), sdk_spans=recorded
        )
        return any(isinstance(layer, OpenTelemetryMiddleware) for layer in endpoint.server.middleware)

    assert not spans(False)
    assert spans(True)


@pytest.mark.parametrize("mode", MODES)
async def test_bad_arguments_list_every_violation(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.surface.server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("acme__crm__search_customers", {"limit": "many", "colour": "red"})
    assert result.is_error is True
    envelope = result_of(result)
    assert envelope["status"] == "invalid_request"
    assert envelope["error"]["code"] == "I-REQ-SCHEMA"
    assert envelope["error"]["fix"]
    pointers = {v["pointer"] for v in envelope["error"]["details"]["violations"]}
    assert "/limit" in pointers and "" in pointers  # wrong type and the unknown property


async def test_unknown_tool_is_a_tool_error_not_a_crash(gateway: Gateway) -> None:
    async with Client(gateway.surface.server) as client:
        result = await client.call_tool("acme__crm__nope", {})
        assert result.is_error is True
        assert result_of(result)["error"]["code"] == "I-REQ-UNKNOWN-TOOL"
        again = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1002"})
    assert again.is_error is False


async def test_destructive_tool_is_never_executed(gateway: Gateway, backend_url: str) -> None:
    async with Client(gateway.surface.server) as client:
        void = {"invoice_id": "INV-2001", "reason": "In error"}
        result = await client.call_tool("acme__billing__void_invoice", void)
    assert result.is_error is True
    assert result_of(result)["error"]["code"] == "P-PRECOND-APPROVAL-REQUIRED"
    invoice = httpx2.get(f"{backend_url}/invoices/INV-2001").json()
    assert invoice["status"] != "void"


async def test_backend_errors_carry_code_and_backend_message(gateway: Gateway) -> None:
    async with Client(gateway.surface.server) as client:
        result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-9999"})
    envelope = result_of(result)
    assert envelope["status"] == "terminal_error"
    assert envelope["error"]["code"] == "I-REQ-UPSTREAM-NOT-FOUND"
    assert "C-9999" in envelope["error"]["message"]
    assert envelope["error"]["details"]["upstream_status"] == 404


async def test_unreachable_backend_is_retryable(gateway: Gateway) -> None:
    gateway.catalog.publish(demo_contract("crm", "http://127.0.0.1:9", version="1.0.1"))
    async with Client(gateway.surface.server) as client:
        result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
    envelope = result_of(result)
    assert envelope["status"] == "retryable_error"
    assert envelope["error"]["code"] == "R-UPSTREAM-CONNECT"


async def test_output_that_breaks_its_schema_is_a_data_error(gateway: Gateway, backend_url: str) -> None:
    contract = demo_contract("crm", backend_url, version="1.1.0")
    endpoints = [e.model_dump(mode="json", exclude_none=True) for e in contract.endpoints]
    for endpoint in endpoints:
        if endpoint["operation_id"] == "get_customer":
            endpoint["output_schema"] = {"type": "object", "required": ["loyalty_tier"]}
    gateway.catalog.publish(
        contract.model_copy(
            update={
                "endpoints": contract.model_validate(
                    {**contract.model_dump(mode="json", exclude_none=True), "endpoints": endpoints}
                ).endpoints
            }
        )
    )
    async with Client(gateway.surface.server) as client:
        result = await client.call_tool("acme__crm__get_customer", {"customer_id": "C-1001"})
    envelope = result_of(result)
    assert envelope["error"]["code"] == "D-DATA-OUTPUT-SCHEMA"
    assert envelope["provenance"]["tool_version"] == "1.1.0"


@pytest.mark.parametrize("mode", MODES)
async def test_dry_run_validates_without_executing(gateway: Gateway, backend_url: str, mode: str) -> None:
    before = httpx2.get(f"{backend_url}/customers", params={"q": "Dry Run"}).json()
    async with Client(gateway.surface.server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool(
            "acme__crm__create_customer",
            {"name": "Dry Run Example", "email": "dry.run@example.com"},
            meta={"colonnade/dry_run": True},
        )
    envelope = result_of(result)
    assert envelope["status"] == "success" and "dry run" in " ".join(envelope["warnings"])
    assert httpx2.get(f"{backend_url}/customers", params={"q": "Dry Run"}).json() == before


@pytest.mark.parametrize("mode", MODES)
async def test_dry_run_of_a_tool_with_an_output_schema_is_accepted_by_the_sdk_client(
    gateway: Gateway, mode: str
) -> None:
    """The client checks a non-error result against the listed output schema, and a dry run has no
    output: it is a tool result flagged isError whose text says the call passed, never an exception."""
    async with Client(gateway.surface.server, mode=mode) as client:  # type: ignore[arg-type]
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["acme__billing__get_invoice"].output_schema is not None
        result = await client.call_tool(
            "acme__billing__get_invoice", {"invoice_id": "INV-2001"}, meta={"colonnade/dry_run": True}
        )
        refused = await client.call_tool(
            "acme__billing__get_invoice", {"invoice_id": 7}, meta={"colonnade/dry_run": True}
        )
    assert result.is_error is True and result.structured_content is None
    text = result.content[0]
    assert isinstance(text, types.TextContent) and text.text.startswith("dry run passed")
    envelope = result_of(result)
    assert envelope["status"] == "success" and envelope["provenance"]["tool_id"] == "acme:billing:get_invoice"
    assert result_of(refused)["error"]["code"] == "I-REQ-SCHEMA"  # a dry run still validates


async def test_legacy_clients_hear_list_changes(gateway: Gateway, backend_url: str) -> None:
    heard = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    async with Client(gateway.surface.server, mode="legacy", message_handler=on_message) as client:
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        await client.list_tools()
        gateway.catalog.publish(demo_contract("crm", backend_url, version="2.0.0"))
        with anyio.fail_after(5):
            await heard.wait()


async def test_modern_clients_hear_list_changes_over_listen(gateway: Gateway, backend_url: str) -> None:
    async with Client(gateway.surface.server) as client, client.listen(tools_list_changed=True) as sub:
        gateway.catalog.publish(demo_contract("billing", backend_url, version="2.0.0"))
        with anyio.fail_after(5):
            event = await sub.__anext__()
    assert type(event).__name__ == "ToolsListChanged"
