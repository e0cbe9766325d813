"""Child spans around a call's I/O: only when the call records spans, never an exception message."""

from __future__ import annotations

import pytest
from opentelemetry import context as otel_context
from opentelemetry.trace import StatusCode

from colonnade.observability.tracing import call_context, io_span, trace_headers
from tests.observability.conftest import Traced


def test_outside_a_recorded_call_there_is_no_child_span() -> None:
    with io_span("colonnade.store audit.append") as span:
        assert span is None
        assert trace_headers() == {}


def test_a_child_span_is_current_inside_and_marks_a_fault_by_type_only(traced: Traced) -> None:
    tracer = traced.provider.get_tracer("t")
    call = tracer.start_span("execute_tool x")
    token = otel_context.attach(call_context(call, tracer))
    try:
        with io_span("GET /customers/{customer_id}") as span:
            assert span is not None
            header = trace_headers()["traceparent"]
            assert (
                header
                == f"00-{call.get_span_context().trace_id:032x}-{span.get_span_context().span_id:016x}-01"
            )
        with pytest.raises(KeyError), io_span("colonnade.policy decide"):
            raise KeyError("customer C-1001")
    finally:
        otel_context.detach(token)
        call.end()
    child, failed, _ = traced.exporter.get_finished_spans()
    assert child.parent is not None and child.parent.span_id == call.get_span_context().span_id
    assert failed.attributes is not None and failed.attributes["error.type"] == "KeyError"
    assert failed.status.status_code is StatusCode.ERROR and failed.events == ()
    assert "C-1001" not in repr(failed.to_json())
