"""The gateway's own tools run through the pipeline: a search is observed exactly like any call."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from colonnade.catalog.catalog import Catalog
from colonnade.config import RoutingSettings, Settings
from colonnade.runtime.gateway import Gateway
from tests.observability.conftest import TOOL, LogCapture, Traced, sample


@pytest.fixture
async def gateway(catalog: Catalog, traced: Traced) -> AsyncIterator[Gateway]:
    built = Gateway(
        Settings(routing=RoutingSettings(enabled=True)), catalog=catalog, tracer_provider=traced.provider
    )
    yield built
    await built.aclose()


async def test_search_tools_has_the_span_metrics_and_log_line_of_any_call(
    logs: LogCapture, gateway: Gateway, traced: Traced
) -> None:
    async with Client(gateway.mcp.server) as client:
        found = await client.call_tool("search_tools", {"query": "fetch one customer record"})
        fetched = await client.call_tool(TOOL.replace(":", "__"), {"customer_id": "C-1001"})
    assert found.is_error is False and fetched.is_error is True  # no backend runs here: a typed error

    finished = traced.exporter.get_finished_spans()
    spans = {span.name: span for span in finished if span.name.startswith("execute_tool ")}
    assert set(spans) == {"execute_tool colonnade:gateway:search_tools", f"execute_tool {TOOL}"}
    for name, span in spans.items():
        attributes = dict(span.attributes or {})
        assert attributes["colonnade.tool"] == attributes["gen_ai.tool.name"] == name.split(" ")[1]
        assert {"colonnade.call_id", "colonnade.trace_id", "colonnade.status"} <= set(attributes)

    counted = {"tool": "colonnade:gateway:search_tools", "status": "success", "code": ""}
    assert sample(gateway.metrics, "colonnade_calls_total", **counted) == 1
    calls = [line for line in logs.lines() if line.get("event") == "call"]
    assert [line["tool"] for line in calls] == ["colonnade:gateway:search_tools", TOOL]
    assert set(calls[0]) == set(calls[1])  # the same fields: one log line shape for every call
    assert calls[0]["args"] == ["query"] and calls[0]["status"] == "success"


async def test_bad_arguments_to_a_builtin_tool_are_validated_by_the_pipeline(
    logs: LogCapture, gateway: Gateway
) -> None:
    async with Client(gateway.mcp.server) as client:
        result = await client.call_tool("describe_tool", {"name": "", "extra": 1})
    assert result.is_error is True
    envelope = dict((result.meta or {})["colonnade/result"])
    assert envelope["error"]["code"] == "I-REQ-SCHEMA"
    assert {v["pointer"] for v in envelope["error"]["details"]["violations"]} == {"/name", ""}
    (line,) = [line for line in logs.lines() if line.get("event") == "call"]
    assert (line["tool"], line["code"]) == ("colonnade:gateway:describe_tool", "I-REQ-SCHEMA")
