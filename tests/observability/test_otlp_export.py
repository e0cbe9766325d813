"""One trace from the agent to the backend, exported over OTLP/HTTP to a real receiver on loopback.

The receiver decodes the wire format with the OpenTelemetry protobuf definitions; the demo backend
(uvicorn on loopback) reads the `traceparent` of the request the gateway sends it. The MCP client
is the SDK's, talking to the gateway's own MCP server.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from mcp import Client
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings, TelemetrySettings
from colonnade.contracts.model import Contract
from colonnade.runtime.gateway import Gateway
from examples.demo_backend import create_app
from tests.observability.conftest import sample
from tests.support.loopback import free_port, serve_in_thread
from tests.support.otlp_receiver import OtlpReceiver, attributes_of, otlp_receiver, until

ROOT = Path(__file__).resolve().parents[2]
TOOL = "acme:crm:get_customer"
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
CUSTOMER = "C-1001"


@dataclass
class Backend:
    url: str
    traceparents: list[str]


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    app = create_app(tmp_path_factory.mktemp("backend") / "demo.db")
    with serve_in_thread(app, lifespan="on") as url:
        yield Backend(url, app.state.traceparents)


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as running:
        yield running


def crm_catalog(base_url: str) -> Catalog:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    data["backend"]["base_url"] = base_url
    catalog = Catalog()
    catalog.publish(Contract.model_validate(data))
    return catalog


@pytest.fixture
async def exporting(backend: Backend, receiver: OtlpReceiver) -> AsyncIterator[Gateway]:
    telemetry = TelemetrySettings(
        otlp_endpoint=receiver.url,
        otlp_headers={"x-collector-key": "k-123"},
        service_name="colonnade-test",
        resource_attributes={"deployment.environment": "test"},
        schedule_delay_s=0.05,
        metrics_interval_s=0.2,
    )
    built = Gateway(Settings(telemetry=telemetry), catalog=crm_catalog(backend.url))
    yield built
    await built.aclose()


def _hex(raw: bytes) -> str:
    return raw.hex()


def _descendants(spans: list[Span], root: Span) -> list[Span]:
    found, frontier = [], [root.span_id]
    while frontier:
        parent = frontier.pop()
        children = [span for span in spans if span.parent_span_id == parent]
        found += children
        frontier += [child.span_id for child in children]
    return found


async def test_one_tools_call_is_one_trace_from_the_caller_to_the_backend(
    exporting: Gateway, receiver: OtlpReceiver, backend: Backend
) -> None:
    meta = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01", "tracestate": "vendor=opaque"}
    async with Client(exporting.mcp.server) as client:
        result = await client.call_tool(TOOL.replace(":", "__"), {"customer_id": CUSTOMER}, meta=meta)
    assert result.is_error is False

    spans = await receiver.wait_for_spans(2)  # the call's, and its request to the backend
    (call,) = [span for span in spans if span.name == f"execute_tool {TOOL}"]
    assert (_hex(call.trace_id), _hex(call.parent_span_id)) == (CALLER_TRACE, CALLER_SPAN)
    assert call.kind == Span.SPAN_KIND_SERVER
    attributes = attributes_of(call)
    assert {
        key: attributes.get(key)
        for key in (
            "mcp.method.name",
            "gen_ai.operation.name",
            "gen_ai.tool.name",
            "colonnade.version",
            "colonnade.determinism",
            "colonnade.status",
        )
    } == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": TOOL,
        "colonnade.version": "1.0.0",
        "colonnade.determinism": "idempotent",
        "colonnade.status": "success",
    }
    assert {"jsonrpc.request.id", "gen_ai.tool.call.id", "colonnade.timeout_ms"} <= set(attributes)
    assert call.trace_state == "vendor=opaque"

    children = _descendants(spans, call)
    (request,) = [span for span in children if span.kind == Span.SPAN_KIND_CLIENT]
    assert request.name == "GET /customers/{customer_id}"
    assert attributes_of(request)["http.response.status_code"] == 200
    # The backend saw the same trace, with the gateway's request span as its parent.
    assert f"00-{CALLER_TRACE}-{_hex(request.span_id)}-01" in backend.traceparents

    (resource,) = {
        tuple(sorted((a.key, a.value.string_value) for a in r.resource.attributes))
        for r in receiver.traces[0].resource_spans
    }
    assert ("service.name", "colonnade-test") in resource and ("deployment.environment", "test") in resource
    assert all(headers.get("x-collector-key") == "k-123" for headers in receiver.headers)
    assert all(headers["content-type"] == "application/x-protobuf" for headers in receiver.headers)


async def test_no_argument_value_reaches_the_collector(
    exporting: Gateway, receiver: OtlpReceiver, backend: Backend
) -> None:
    async with Client(exporting.mcp.server) as client:
        await client.call_tool(TOOL.replace(":", "__"), {"customer_id": CUSTOMER})
        await client.call_tool(TOOL.replace(":", "__"), {"customer_id": "C-SECRET-42"})
    await receiver.wait_for_spans(3)  # two calls and one backend request (the schema refuses the other)
    await exporting.aclose()  # the last spans and a last metrics push go out
    exported = b"".join(receiver.raw)
    assert exported and b"C-1001" not in exported and b"C-SECRET-42" not in exported
    assert b"Ada Example" not in exported  # nor anything the backend answered


async def test_metrics_go_out_as_otlp_too(exporting: Gateway, receiver: OtlpReceiver) -> None:
    await exporting.calls.call(CallRequest(tool_id=TOOL, input={"customer_id": CUSTOMER}))
    await until(lambda: "colonnade_call_duration_seconds" in receiver.metric_names())
    assert {"colonnade_calls", "colonnade_call_duration_seconds"} <= receiver.metric_names()


async def test_a_collector_that_is_down_costs_calls_nothing_and_drops_are_counted(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    telemetry = TelemetrySettings(
        otlp_endpoint=f"http://127.0.0.1:{free_port()}",  # nothing listens there
        otlp_timeout_s=0.5,
        max_queue_size=4,
        max_export_batch_size=2,
        schedule_delay_s=0.05,
        metrics=False,
    )
    gateway = Gateway(Settings(telemetry=telemetry), catalog=crm_catalog(backend.url))
    try:
        results = [
            await gateway.calls.call(CallRequest(tool_id=TOOL, input={"customer_id": CUSTOMER}))
            for _ in range(30)
        ]
        assert {result.status for result in results} == {CallStatus.SUCCESS}
        counters = gateway.telemetry.counters
        assert counters is not None
        # Refused at once, or timed out while the queue overflowed: either way, counted and dropped.
        await until(lambda: counters.dropped >= 2 * len(results) - telemetry.max_queue_size)
        assert counters.dropped >= 2 * len(results) - telemetry.max_queue_size and counters.exported == 0
        dropped = sum(
            sample(gateway.metrics, "colonnade_telemetry_spans_dropped_total", reason=reason)
            for reason in ("queue_full", "export_failed")
        )
        assert dropped == counters.dropped
        warned = [r for r in caplog.records if r.name == "colonnade.observability.otlp"]
        assert len(warned) == 1 and "failed" in warned[0].getMessage()  # once, not once per batch
    finally:
        started = time.monotonic()
        await gateway.aclose()
        assert time.monotonic() - started < 10  # a stopping gateway does not wait on the collector for long
