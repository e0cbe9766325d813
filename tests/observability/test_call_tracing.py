"""One OpenTelemetry span per call, in the call's trace, with its outcome as attributes."""

from __future__ import annotations

import io
import json

from opentelemetry import trace
from opentelemetry.trace import StatusCode

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallContext, CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.catalog.catalog import Catalog
from colonnade.observability.tracing import TRACER_NAME, build_tracer_provider, console_exporter
from tests.observability.conftest import TOOL, Answer, Explode, LogCapture, Traced, observed, request


async def test_a_call_has_a_span_named_after_its_tool(
    logs: LogCapture, catalog: Catalog, traced: Traced
) -> None:
    gateway = observed(catalog, Answer(), traced=traced)
    sent = request()
    await gateway.service.call(sent)
    (span,) = traced.exporter.get_finished_spans()
    assert span.name == f"execute_tool {TOOL}"  # the GenAI semantic conventions' name of a tool's execution
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": TOOL,
        "gen_ai.tool.call.id": sent.call_id,
        "colonnade.tool": TOOL,
        "colonnade.tool_id": TOOL,
        "colonnade.version": "1.0.0",
        "colonnade.determinism": "idempotent",
        "colonnade.timeout_ms": span.attributes["colonnade.timeout_ms"] if span.attributes else None,
        "colonnade.call_id": sent.call_id,
        "colonnade.trace_id": sent.context.trace_id,
        "colonnade.status": "success",
    }
    assert span.attributes is not None and 0 < float(span.attributes["colonnade.timeout_ms"]) <= 30_000
    assert span.status.status_code is StatusCode.UNSET
    assert span.parent is None
    assert format(span.context.trace_id, "032x") == sent.context.trace_id  # the log line's trace_id finds it


async def test_an_error_outcome_marks_the_span(logs: LogCapture, catalog: Catalog, traced: Traced) -> None:
    gateway = observed(catalog, Answer(), traced=traced)
    await gateway.service.call(request(input={"fail_with": "R-TIMEOUT-001"}))
    (span,) = traced.exporter.get_finished_spans()
    assert span.attributes is not None and span.attributes["colonnade.error_code"] == "R-TIMEOUT-001"
    assert span.attributes["colonnade.status"] == "retryable_error"
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, "R-TIMEOUT-001")


async def test_a_fault_records_the_exception_type_only(
    logs: LogCapture, catalog: Catalog, traced: Traced
) -> None:
    gateway = observed(catalog, Explode(), traced=traced)
    await gateway.service.call(request(input={"customer_id": "C-1001"}))
    (span,) = traced.exporter.get_finished_spans()
    assert span.attributes is not None
    assert (span.attributes["exception.type"], span.attributes["colonnade.error_code"]) == (
        "KeyError",
        "S-TOOL-INTERNAL",
    )
    assert span.events == ()  # no exception event: its message would quote the argument


async def test_a_call_with_a_parent_span_continues_the_callers_trace(
    logs: LogCapture, catalog: Catalog, traced: Traced
) -> None:
    gateway = observed(catalog, Answer(), traced=traced)
    context = CallContext(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", parent_span_id="00f067aa0ba902b7")
    await gateway.service.call(request(context=context))
    (span,) = traced.exporter.get_finished_spans()
    assert span.parent is not None and span.parent.is_remote
    assert format(span.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert format(span.context.trace_id, "032x") == "4bf92f3577b34da6a3ce929d0e0e4736"


async def test_a_trace_id_that_is_not_hex_still_gets_a_span(
    logs: LogCapture, catalog: Catalog, traced: Traced
) -> None:
    gateway = observed(catalog, Answer(), traced=traced)
    await gateway.service.call(request(context=CallContext(trace_id="req-42")))
    (span,) = traced.exporter.get_finished_spans()
    assert span.context.trace_id != 0
    assert span.attributes is not None and span.attributes["colonnade.trace_id"] == "req-42"


class SeesTheSpan:
    """A later stage reads the current span, as an adapter propagating `traceparent` would."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, call: Call, next: Next) -> CallResult:
        self.seen.append(format(trace.get_current_span().get_span_context().trace_id, "032x"))
        return call.result(CallStatus.SUCCESS)


async def test_later_stages_run_inside_the_span_when_spans_are_recorded(
    logs: LogCapture, catalog: Catalog, traced: Traced
) -> None:
    spy = SeesTheSpan()
    gateway = observed(catalog, spy, traced=traced)
    sent = request()
    await gateway.service.call(sent)
    assert spy.seen == [sent.context.trace_id]
    assert not trace.get_current_span().get_span_context().is_valid  # deactivated after the call


async def test_without_an_exporter_no_span_is_built_at_all(logs: LogCapture, catalog: Catalog) -> None:
    """A span nobody records would still cost ids, a context and two switches on every call."""
    spy = SeesTheSpan()
    gateway = observed(catalog, spy)
    await gateway.service.call(request())
    assert spy.seen == ["0" * 32]


async def test_a_refused_request_has_a_span_too(logs: LogCapture, catalog: Catalog, traced: Traced) -> None:
    gateway = observed(catalog, Answer(), traced=traced)
    await gateway.service.call(request("nope"))
    (span,) = traced.exporter.get_finished_spans()
    assert span.name == "execute_tool"  # no tool to name: the operation alone
    assert span.attributes is not None and span.attributes["colonnade.error_code"] == "I-REQ-UNKNOWN-TOOL"
    assert (span.attributes["error.type"], span.attributes["colonnade.tool_id"]) == (
        "I-REQ-UNKNOWN-TOOL",
        "nope",
    )


def test_without_an_exporter_spans_are_not_recorded() -> None:
    tracer = build_tracer_provider().get_tracer(TRACER_NAME)
    span = tracer.start_span("x")
    assert not span.is_recording() and span.get_span_context().is_valid
    span.end()


def test_the_console_exporter_writes_to_the_given_stream() -> None:
    stream = io.StringIO()
    provider = build_tracer_provider(console_exporter(stream))
    provider.get_tracer(TRACER_NAME).start_span("acme:crm:get_customer").end()
    provider.shutdown()
    assert json.loads(stream.getvalue())["name"] == "acme:crm:get_customer"
