"""A caller's W3C trace context is read where it arrives (MCP `_meta`, the REST `traceparent` header)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from colonnade.calls.envelope import CallRequest
from colonnade.config import ConfigError, TelemetrySettings, load_settings
from colonnade.observability.tracing import Traceparent, parse_traceparent
from colonnade.surfaces.mcp.call_envelope import call_request
from examples.demo_backend import create_app
from tests.support.loopback import serve_in_thread
from tests.support.otlp_receiver import OtlpReceiver, attributes_of, otlp_receiver, until
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings, serve_gateway

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
HEADER = f"00-{TRACE}-{SPAN}-01"


def test_a_valid_traceparent_is_read_with_its_flags_and_state() -> None:
    assert parse_traceparent(HEADER, " rojo=00f067aa0ba902b7 ") == Traceparent(
        TRACE, SPAN, 1, "rojo=00f067aa0ba902b7"
    )
    assert parse_traceparent(f"00-{TRACE}-{SPAN}-00") == Traceparent(TRACE, SPAN, 0)
    # A later version may append fields; this reader takes the four it knows.
    assert parse_traceparent(f"01-{TRACE}-{SPAN}-01-later") == Traceparent(TRACE, SPAN, 1)


@pytest.mark.parametrize(
    "header",
    [
        f"ff-{TRACE}-{SPAN}-01",  # version ff is invalid
        f"00-{'0' * 32}-{SPAN}-01",  # all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # all-zero parent id
        f"00-{TRACE.upper()}-{SPAN}-01",  # upper case hex
        f"00-{TRACE}-{SPAN}-01-extra",  # version 00 has exactly four fields
        f"00-{TRACE[:-1]}-{SPAN}-01",
        "",
        42,
        None,
    ],
)
def test_an_invalid_traceparent_is_ignored(header: object) -> None:
    assert parse_traceparent(header) is None


def test_a_tracestate_too_long_is_dropped_whole() -> None:
    parsed = parse_traceparent(HEADER, "k=" + "v" * 600)
    assert parsed is not None and parsed.tracestate is None


def test_mcp_meta_traceparent_continues_the_callers_trace() -> None:
    request = call_request("acme__crm__get_customer", {}, {"traceparent": HEADER, "tracestate": "a=b"})
    assert isinstance(request, CallRequest)
    context = request.context
    assert (context.trace_id, context.parent_span_id, context.trace_flags, context.tracestate) == (
        TRACE,
        SPAN,
        1,
        "a=b",
    )


def test_an_envelope_that_names_its_parent_wins_over_meta() -> None:
    own = {"context": {"trace_id": "a" * 32, "parent_span_id": "b" * 16}}
    meta = {"traceparent": HEADER, "colonnade/request": own}
    request = call_request("t", {}, meta)
    assert isinstance(request, CallRequest)
    assert (request.context.trace_id, request.context.parent_span_id) == ("a" * 32, "b" * 16)


def test_an_invalid_meta_traceparent_leaves_a_fresh_trace() -> None:
    request = call_request("t", {}, {"traceparent": "garbage"})
    assert isinstance(request, CallRequest)
    assert request.context.parent_span_id is None and len(request.context.trace_id) == 32


def test_the_standard_otel_variables_set_the_telemetry_settings() -> None:
    settings = load_settings(
        environ={
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/",
            "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%3Db, tenant=t1",
            "OTEL_SERVICE_NAME": "gw-eu",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod",
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": "0.25",
            "OTEL_BSP_SCHEDULE_DELAY": "250",
            "OTEL_METRICS_EXPORTER": "none",
        }
    )
    telemetry = settings.telemetry
    assert telemetry.traces_url == "http://127.0.0.1:4318/v1/traces"
    assert telemetry.otlp_headers == {"api-key": "a=b", "tenant": "t1"}
    assert (telemetry.service_name, telemetry.resource_attributes) == (
        "gw-eu",
        {"deployment.environment": "prod"},
    )
    assert (telemetry.traces_sampler, telemetry.traces_sampler_arg) == ("parentbased_traceidratio", 0.25)
    assert (telemetry.schedule_delay_s, telemetry.metrics, telemetry.metrics_url is not None) == (
        0.25,
        False,
        True,
    )


def test_a_colonnade_variable_wins_over_the_otel_one() -> None:
    settings = load_settings(
        environ={"OTEL_SERVICE_NAME": "from-otel", "COLONNADE_TELEMETRY__SERVICE_NAME": "from-colonnade"}
    )
    assert settings.telemetry.service_name == "from-colonnade"


def test_grpc_is_refused_with_the_variable_named() -> None:
    with pytest.raises(
        ConfigError, match=r"environment OTEL_EXPORTER_OTLP_PROTOCOL: telemetry\.otlp_protocol"
    ):
        load_settings(environ={"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})


def test_without_an_endpoint_nothing_is_exported() -> None:
    assert TelemetrySettings().traces_url is None and TelemetrySettings().metrics_url is None


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as running:
        yield running


async def test_rest_traceparent_header_continues_the_trace_through_store_and_backend(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    app = create_app(tmp_path / "demo.db")
    with serve_in_thread(app, lifespan="on") as backend_url:
        contracts = [demo_contract_file(tmp_path, "crm", backend_url)]
        telemetry = TelemetrySettings(otlp_endpoint=receiver.url, schedule_delay_s=0.05, metrics=False)
        settings = gateway_settings(tmp_path / "data", contracts, telemetry=telemetry)
        with serve_gateway(settings) as running:
            response = running.client.post(
                "/v1/calls",
                json={"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}},
                headers={"traceparent": HEADER},
            )
            assert response.json()["status"] == "success"
            assert await until(lambda: any(s.name.startswith("GET ") for s in receiver.spans()))
            assert await until(lambda: any(s.name.startswith("execute_tool ") for s in receiver.spans()))
    spans = receiver.spans()
    (call,) = [span for span in spans if span.name == "execute_tool acme:crm:get_customer"]
    assert (call.trace_id.hex(), call.parent_span_id.hex()) == (TRACE, SPAN)
    children = {span.name: span for span in spans if span.parent_span_id == call.span_id}
    assert {"colonnade.store audit.append", "GET /customers/{customer_id}"} <= set(children)
    assert "mcp.method.name" not in attributes_of(call)  # not an MCP call
    request = children["GET /customers/{customer_id}"]
    assert f"00-{TRACE}-{request.span_id.hex()}-01" in app.state.traceparents
