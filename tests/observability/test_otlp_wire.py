"""Our OTLP span encoding decodes (OpenTelemetry protobuf definitions) to what the SDK encoder makes."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from colonnade.observability.otlp_wire import encode_spans
from colonnade.observability.tracing import build_tracer_provider, start_call_span

SAMPLED_AND_REMOTE = 0x1 | 0x100 | 0x200  # W3C sampled flag, and "the parent is remote" known and true


def test_spans_of_every_shape_decode_as_the_sdk_encodes_them() -> None:
    exporter = InMemorySpanExporter()
    provider = build_tracer_provider(exporter)
    tracer = provider.get_tracer("colonnade.test", "1.2.3")
    call = start_call_span(
        tracer,
        "execute_tool acme:crm:get_customer",
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        parent_span_id="00f067aa0ba902b7",
        tracestate="vendor=opaque",
        attributes={"s": "text é", "i": -7, "f": 0.25, "b": True, "list": ("a", "b"), "big": 2**40},
        kind=SpanKind.SERVER,
    )
    call.add_event("retry", {"attempt": 2})
    call.set_status(StatusCode.ERROR, "R-TIMEOUT-001")
    call.end()
    child = tracer.start_span(
        "GET /customers/{customer_id}", kind=SpanKind.CLIENT, attributes={"b": False, "i": 1}
    )
    child.end()
    spans = exporter.get_finished_spans()

    ours = ExportTraceServiceRequest.FromString(encode_spans(spans))
    theirs = sdk_encode_spans(spans)
    ours_spans = [s for r in ours.resource_spans for scope in r.scope_spans for s in scope.spans]
    theirs_spans = [s for r in theirs.resource_spans for scope in r.scope_spans for s in scope.spans]
    assert len(ours_spans) == 2
    # The SDK leaves the W3C trace flags out of `flags`, which trace.proto gives its low 8 bits.
    assert ours_spans[0].flags == SAMPLED_AND_REMOTE
    for mine, sdk in zip(ours_spans, theirs_spans, strict=True):
        mine.ClearField("flags")
        sdk.ClearField("flags")
        assert mine == sdk
    assert ours.resource_spans[0].resource == theirs.resource_spans[0].resource
    assert ours.resource_spans[0].scope_spans[0].scope == theirs.resource_spans[0].scope_spans[0].scope
    provider.shutdown()


def test_a_cached_attribute_keeps_its_type() -> None:
    exporter = InMemorySpanExporter()
    provider = build_tracer_provider(exporter)
    tracer = provider.get_tracer("t")
    for value in (1, True, 1.0, "1"):
        tracer.start_span("s", attributes={"v": value}).end()
    decoded = ExportTraceServiceRequest.FromString(encode_spans(exporter.get_finished_spans()))
    values = [s.attributes[0].value for s in decoded.resource_spans[0].scope_spans[0].spans]
    assert [v.WhichOneof("value") for v in values] == [
        "int_value",
        "bool_value",
        "double_value",
        "string_value",
    ]
    provider.shutdown()
