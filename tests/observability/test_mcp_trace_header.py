"""A caller's W3C `traceparent`/`tracestate` HTTP headers continue its trace on both MCP surfaces.

A real `colonnade serve` process, configured only by the standard OTEL_* variables, federates the
fault server (stdio) and exports to a real OTLP receiver on loopback. The SDK's MCP client sends the
trace context as HTTP headers only (no `_meta`), in both protocol eras ("auto" negotiates the
stateless 2026-07-28 era, "legacy" the handshake era), to `/mcp` and to `/servers/local/mcp`; the
exported call span's parent is the caller's span. `_meta`'s `traceparent` wins over the header's.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from colonnade.calls.envelope import CallRequest
from colonnade.surfaces.mcp.call_envelope import call_request
from tests.federation.conftest import Federation, run_gateway
from tests.support.mcp_servers import fault_stdio
from tests.support.otlp_receiver import OtlpReceiver, otlp_receiver, until

pytestmark = pytest.mark.e2e

HEADER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
HEADER_SPAN = "00f067aa0ba902b7"
META_TRACE = "0af7651916cd43dd8448eb211c80319c"
META_SPAN = "b7ad6b7169203331"


def _traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"


def test_an_http_header_is_the_parent_when_meta_has_none() -> None:
    headers = {"traceparent": _traceparent(HEADER_TRACE, HEADER_SPAN), "tracestate": "h=1"}
    request = call_request("t", {}, {}, headers)
    assert isinstance(request, CallRequest)
    context = request.context
    assert (context.trace_id, context.parent_span_id, context.tracestate) == (
        HEADER_TRACE,
        HEADER_SPAN,
        "h=1",
    )


def test_meta_wins_over_the_header_and_keeps_its_own_state() -> None:
    headers = {"traceparent": _traceparent(HEADER_TRACE, HEADER_SPAN), "tracestate": "h=1"}
    meta = {"traceparent": _traceparent(META_TRACE, META_SPAN)}
    request = call_request("t", {}, meta, headers)
    assert isinstance(request, CallRequest)
    context = request.context
    # The header's tracestate never rides on _meta's parent.
    assert (context.trace_id, context.parent_span_id, context.tracestate) == (META_TRACE, META_SPAN, None)


def test_an_invalid_meta_traceparent_falls_back_to_the_header() -> None:
    headers = {"traceparent": _traceparent(HEADER_TRACE, HEADER_SPAN)}
    request = call_request("t", {}, {"traceparent": "garbage"}, headers)
    assert isinstance(request, CallRequest)
    assert (request.context.trace_id, request.context.parent_span_id) == (HEADER_TRACE, HEADER_SPAN)


def test_an_envelope_that_names_its_parent_wins_over_the_header() -> None:
    own = {"context": {"trace_id": "a" * 32, "parent_span_id": "b" * 16}}
    headers = {"traceparent": _traceparent(HEADER_TRACE, HEADER_SPAN)}
    request = call_request("t", {}, {"colonnade/request": own}, headers)
    assert isinstance(request, CallRequest)
    assert (request.context.trace_id, request.context.parent_span_id) == ("a" * 32, "b" * 16)


def test_an_envelope_without_a_parent_takes_the_header() -> None:
    headers = {"traceparent": _traceparent(HEADER_TRACE, HEADER_SPAN)}
    request = call_request("t", {}, {"colonnade/request": {"context": {}}}, headers)
    assert isinstance(request, CallRequest)
    assert (request.context.trace_id, request.context.parent_span_id) == (HEADER_TRACE, HEADER_SPAN)


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as running:
        yield running


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory, receiver: OtlpReceiver) -> Iterator[Federation]:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRICS_EXPORTER": "none",
    }
    tmp: Path = tmp_path_factory.mktemp("trace-header")
    with run_gateway(tmp, [fault_stdio("local")], env=env) as running:
        yield running


async def _call_echo(url: str, tool: str, mode: str, headers: dict[str, str], meta: dict[str, str]) -> None:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30.0) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        result = await client.call_tool(tool, {}, meta=meta or None)
    assert result.is_error is False, result


async def _call_span(receiver: OtlpReceiver, trace_id: str) -> Span:
    def calls() -> list[Span]:
        return [
            s for s in receiver.spans() if s.name.startswith("execute_tool ") and s.trace_id.hex() == trace_id
        ]

    assert await until(lambda: bool(calls()), 20), [s.name for s in receiver.spans()]
    (call,) = calls()
    return call


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("surface", ["aggregate", "server"])
async def test_the_traceparent_header_is_the_call_spans_parent(
    federation: Federation, receiver: OtlpReceiver, mode: str, surface: str
) -> None:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    url, tool = (
        (federation.mcp, "default__local__echo")
        if surface == "aggregate"
        else (federation.server("local"), "echo")
    )
    headers = {"traceparent": _traceparent(trace_id, span_id), "tracestate": "vendor=hdr"}
    await _call_echo(url, tool, mode, headers, {})
    call = await _call_span(receiver, trace_id)
    assert call.parent_span_id.hex() == span_id
    assert call.trace_state == "vendor=hdr"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_meta_traceparent_wins_over_the_header_on_the_wire(
    federation: Federation, receiver: OtlpReceiver, mode: str
) -> None:
    header_trace, meta_trace, meta_span = secrets.token_hex(16), secrets.token_hex(16), secrets.token_hex(8)
    headers = {"traceparent": _traceparent(header_trace, secrets.token_hex(8))}
    meta = {"traceparent": _traceparent(meta_trace, meta_span)}
    await _call_echo(federation.mcp, "default__local__echo", mode, headers, meta)
    call = await _call_span(receiver, meta_trace)
    assert call.parent_span_id.hex() == meta_span
    assert not [
        s for s in receiver.spans() if s.name.startswith("execute_tool ") and s.trace_id.hex() == header_trace
    ]
