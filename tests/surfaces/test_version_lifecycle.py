"""Versions that coexist, over REST and MCP, against a real backend and the real gateway.

1.0.0, 1.1.0 and 2.0.0 (which renames list_orders and drops cancel_order) are published. A caller
that pins major 1 keeps reaching list_orders after 2.0.0 while unpinned callers get 2.0.0; once
1.1.0 is deprecated the pinned call still answers with a deprecation warning in the envelope's
`warnings` (and `_meta`); after 1.0.0's sunset, a call pinned to it is refused with
C-CONTRACT-SUNSET naming the successor. A restarted gateway holds every version again.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from colonnade.calls.stages.resolve import SUNSET
from colonnade.catalog.tool import META_DEPRECATION
from tests.support.loopback import serve_in_thread
from tests.support.orders_backend import create_app, version_file
from tests.surfaces.rest_harness import RunningGateway, assert_typed_result, gateway_settings, serve_gateway

LIST_V1 = "acme:orders:list_orders"
SEARCH_V2 = "acme:orders:search_orders"


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_app()) as url:
        yield url


@pytest.fixture
def running(tmp_path: Path, backend_url: str) -> Iterator[RunningGateway]:
    files = [version_file(tmp_path, v, backend_url) for v in ("1.0.0", "1.1.0", "2.0.0")]
    with serve_gateway(gateway_settings(tmp_path / "data", files)) as gateway:
        yield gateway


def _call(running: RunningGateway, tool: str, version: str | None = None, **args: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"tool_id": tool, "input": args}
    if version is not None:
        body["tool_version"] = version
    return assert_typed_result(running.client.post("/v1/calls", json=body))


def _deprecate(running: RunningGateway, version: str, *, sunset_at: datetime | None, successor: str) -> None:
    gateway = running.gateway
    assert gateway.store is not None and gateway.sync is not None
    running.run(gateway.store.deprecate("acme", "orders", version, sunset_at=sunset_at, successor=successor))
    running.run(gateway.sync.refresh())  # (the gateway's own poll may have been first)
    held = {v.version: v.deprecated for v in gateway.catalog.api_versions()}
    assert held[version] is True


def test_a_pinned_caller_keeps_its_major_across_a_new_one_over_rest(running: RunningGateway) -> None:
    newest = _call(running, SEARCH_V2, status="open")
    assert newest["status"] == "success", newest
    assert newest["provenance"]["tool_version"] == "2.0.0"
    unpinned = _call(running, LIST_V1, status="open")
    assert unpinned["error"]["code"] == "I-REQ-UNKNOWN-TOOL"  # renamed in 2.0.0

    pinned = _call(running, LIST_V1, "^1", status="open")
    assert pinned["status"] == "success", pinned
    assert pinned["provenance"]["tool_version"] == "1.1.0"
    assert pinned["warnings"] == []
    exact = _call(running, LIST_V1, "1.0.0")
    assert exact["status"] == "success" and exact["provenance"]["tool_version"] == "1.0.0"


def test_deprecation_warns_then_the_sunset_refuses_naming_the_successor(running: RunningGateway) -> None:
    _deprecate(running, "1.1.0", sunset_at=datetime.now(UTC) + timedelta(days=30), successor="2.0.0")
    warned = _call(running, LIST_V1, "^1", status="open")
    assert warned["status"] == "success", warned
    [warning] = warned["warnings"]
    assert "'acme:orders:list_orders' 1.1.0 is deprecated" in warning
    assert "move to version 2.0.0" in warning and "sunset" in warning
    assert _call(running, SEARCH_V2)["warnings"] == []  # the served version says nothing

    _deprecate(running, "1.0.0", sunset_at=datetime.now(UTC) - timedelta(minutes=1), successor="2.0.0")
    refused = _call(running, LIST_V1, "1.0.0")
    assert refused["status"] == "terminal_error"
    error = refused["error"]
    assert error["code"] == SUNSET
    assert "2.0.0" in error["message"] and error["details"]["successor"] == "2.0.0"
    assert error["details"]["successor_has_tool"] is False  # renamed in 2.0.0: the caller must look
    assert "tool_version" in error["fix"]
    still = _call(running, LIST_V1, "^1", status="open")  # 1.1.0: deprecated, not yet sunset
    assert still["status"] == "success"


def test_the_same_over_mcp(running: RunningGateway) -> None:
    _deprecate(running, "1.1.0", sunset_at=datetime.now(UTC) + timedelta(days=30), successor="2.0.0")
    _deprecate(running, "1.0.0", sunset_at=datetime.now(UTC) - timedelta(minutes=1), successor="2.0.0")
    url = f"{str(running.client.base_url).rstrip('/')}/mcp"

    async def main() -> tuple[Any, Any, Any, list[Any]]:
        async with Client(url) as client:
            tools = (await client.list_tools()).tools
            pinned = await client.call_tool(
                LIST_V1, {"status": "open"}, meta={"colonnade/request": {"tool_version": "^1"}}
            )
            sunset = await client.call_tool(
                LIST_V1, {}, meta={"colonnade/request": {"tool_version": "1.0.0"}}
            )
            newest = await client.call_tool(SEARCH_V2, {"status": "open"})
            return pinned, sunset, newest, tools

    pinned, sunset, newest, tools = running.run(main())
    listed = {tool.meta["colonnade/canonical_name"]: tool for tool in tools if tool.meta}
    assert SEARCH_V2 in listed and LIST_V1 not in listed  # tools/list shows the newest version
    assert META_DEPRECATION not in (listed[SEARCH_V2].meta or {})

    assert pinned.is_error is False
    envelope = (pinned.meta or {})["colonnade/result"]
    assert envelope["provenance"]["tool_version"] == "1.1.0"
    assert any("1.1.0 is deprecated" in w for w in envelope["warnings"])

    assert sunset.is_error is True
    refused = (sunset.meta or {})["colonnade/result"]
    assert refused["error"]["code"] == SUNSET and refused["error"]["details"]["successor"] == "2.0.0"

    assert newest.is_error is False
    assert (newest.meta or {})["colonnade/result"]["warnings"] == []


def test_tools_list_shows_a_pinned_callers_version(running: RunningGateway) -> None:
    """`_meta["colonnade/request"].tool_versions` on tools/list: the pinned API's tools are those of
    the version the pin matches; other APIs and unpinned callers see the newest."""
    url = f"{str(running.client.base_url).rstrip('/')}/mcp"

    def names(tools: list[Any]) -> dict[str, str]:
        return {
            t.meta["colonnade/canonical_name"]: t.meta.get("colonnade/contract_version", "")
            for t in tools
            if t.meta and t.meta.get("colonnade/canonical_name", "").startswith("acme:orders:")
        }

    async def main() -> tuple[Any, ...]:
        async with Client(url) as client:
            newest = (await client.list_tools(cache_mode="bypass")).tools
            major_one = (
                await client.list_tools(
                    meta={"colonnade/request": {"tool_versions": {"acme:orders": "^1"}}}, cache_mode="bypass"
                )
            ).tools
            exact = (
                await client.list_tools(
                    meta={"colonnade/request": {"tool_versions": {"acme:orders": "1.0.0"}}},
                    cache_mode="bypass",
                )
            ).tools
            with pytest.raises(MCPError, match="tool_versions"):
                await client.list_tools(
                    meta={"colonnade/request": {"tool_versions": {"orders": "^1"}}}, cache_mode="bypass"
                )
            with pytest.raises(MCPError, match=r"tool_versions\[.acme:orders.\]"):
                await client.list_tools(
                    meta={"colonnade/request": {"tool_versions": {"acme:orders": "one"}}}, cache_mode="bypass"
                )
            return newest, major_one, exact

    newest, major_one, exact = running.run(main())
    assert SEARCH_V2 in names(newest) and LIST_V1 not in names(newest)
    assert LIST_V1 in names(major_one) and SEARCH_V2 not in names(major_one)
    assert set(names(major_one).values()) == {"1.1.0"} and set(names(exact).values()) == {"1.0.0"}
    # each pinned tool once, beside the gateway's own tools
    assert len(major_one) == len({t.name for t in major_one})


def test_a_restarted_gateway_holds_every_version(tmp_path: Path, backend_url: str) -> None:
    files = [version_file(tmp_path, v, backend_url) for v in ("1.0.0", "1.1.0", "2.0.0")]
    with serve_gateway(gateway_settings(tmp_path / "data", files)) as first:
        _deprecate(first, "1.1.0", sunset_at=None, successor="2.0.0")
    with serve_gateway(gateway_settings(tmp_path / "data", files[2:])) as again:
        versions = {(v.version, v.deprecated) for v in again.gateway.catalog.api_versions()}
        assert versions == {("1.0.0", False), ("1.1.0", True), ("2.0.0", False)}
        pinned = _call(again, LIST_V1, "^1", status="open")
        assert pinned["status"] == "success" and pinned["provenance"]["tool_version"] == "1.1.0"
        assert "move to version 2.0.0" in pinned["warnings"][0]
        [deprecated] = [
            t for t in again.gateway.catalog.tool_versions(LIST_V1).values() if t.version == "1.1.0"
        ]
        assert deprecated.meta()[META_DEPRECATION]["successor"] == "2.0.0"
