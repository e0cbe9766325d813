"""The gateway's own span records behave as the SDK's spans do where the gateway relies on them."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, DEFAULT_ON, TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, SpanContext, StatusCode, TraceFlags

from colonnade.observability.call_spans import CallSpan
from colonnade.observability.otlp_wire import encode_spans
from colonnade.observability.tracing import TRACER_NAME, build_tracer_provider


def _remote(*, sampled: bool) -> trace.Span:
    flags = TraceFlags(TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)
    return NonRecordingSpan(SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=flags))


def test_a_span_is_its_own_record_read_only_once_ended() -> None:
    exporter = InMemorySpanExporter()
    tracer = build_tracer_provider(exporter).get_tracer(TRACER_NAME)
    span = tracer.start_span(
        "execute_tool acme:crm:get", attributes={"gen_ai.tool.name": "get", "gone": None}
    )
    assert isinstance(span, CallSpan) and span.is_recording()
    span.set_attribute("outcome", "success")
    span.set_attributes({"error.type": None, "retries": 0})
    span.set_status(StatusCode.ERROR, "boom")
    span.end()
    span.set_attribute("late", "ignored")
    span.update_name("renamed")
    span.end()  # a second end hands nothing over again
    (record,) = exporter.get_finished_spans()
    assert record is span and not span.is_recording()
    assert record.name == "execute_tool acme:crm:get"
    assert dict(record.attributes or {}) == {"gen_ai.tool.name": "get", "outcome": "success", "retries": 0}
    assert record.status.status_code is StatusCode.ERROR and record.status.description == "boom"
    assert record.end_time is not None and record.start_time is not None
    assert record.end_time >= record.start_time
    assert encode_spans([record])  # the wire encoder reads it like an SDK span


def test_an_exception_is_recorded_by_its_type_only() -> None:
    exporter = InMemorySpanExporter()
    span = build_tracer_provider(exporter).get_tracer(TRACER_NAME).start_span("x")
    span.record_exception(ValueError("customer C-1001 has card 4111 1111 1111 1111"))
    span.end()
    (event,) = exporter.get_finished_spans()[0].events
    assert event.name == "exception"
    assert dict(event.attributes or {}) == {"exception.type": "ValueError"}


def test_children_share_the_trace_and_name_their_parent() -> None:
    exporter = InMemorySpanExporter()
    tracer = build_tracer_provider(exporter).get_tracer(TRACER_NAME)
    parent = tracer.start_span("call")
    child = tracer.start_span("GET /customers", context=trace.set_span_in_context(parent))
    child.end()
    parent.end()
    inner, outer = exporter.get_finished_spans()
    assert inner.context is not None and outer.context is not None
    assert inner.context.trace_id == outer.context.trace_id
    assert inner.parent is not None and inner.parent.span_id == outer.context.span_id
    assert outer.parent is None


@pytest.mark.parametrize("sampler", [ALWAYS_ON, DEFAULT_ON], ids=["always_on", "parentbased_always_on"])
def test_a_sampled_remote_parent_is_continued(sampler: object) -> None:
    exporter = InMemorySpanExporter()
    tracer = build_tracer_provider(exporter, sampler=sampler).get_tracer(TRACER_NAME)  # type: ignore[arg-type]
    span = tracer.start_span("call", context=trace.set_span_in_context(_remote(sampled=True)))
    span.end()
    (record,) = exporter.get_finished_spans()
    assert record.context is not None and record.context.trace_id == 0xABC
    assert record.parent is not None and record.parent.is_remote and record.parent.span_id == 0xDEF


def test_parent_based_sampling_follows_an_unsampled_parent() -> None:
    exporter = InMemorySpanExporter()
    tracer = build_tracer_provider(exporter, sampler=DEFAULT_ON).get_tracer(TRACER_NAME)
    span = tracer.start_span("call", context=trace.set_span_in_context(_remote(sampled=False)))
    assert not span.is_recording() and span.get_span_context().trace_id == 0xABC
    span.end()
    assert exporter.get_finished_spans() == ()


def test_other_samplers_are_asked_as_the_sdk_asks_them() -> None:
    never = build_tracer_provider(InMemorySpanExporter(), sampler=TraceIdRatioBased(0.0))
    always = build_tracer_provider(InMemorySpanExporter(), sampler=TraceIdRatioBased(1.0))
    assert not never.get_tracer(TRACER_NAME).start_span("call").is_recording()
    assert always.get_tracer(TRACER_NAME).start_span("call").is_recording()


def test_without_an_exporter_nothing_is_recorded_but_ids_propagate() -> None:
    span = build_tracer_provider().get_tracer(TRACER_NAME).start_span("call")
    assert not span.is_recording() and span.get_span_context().is_valid


def test_a_disabled_sdk_gives_the_no_op_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    tracer = build_tracer_provider(InMemorySpanExporter()).get_tracer(TRACER_NAME)
    assert not tracer.start_span("call").is_recording()
