"""Observe: the first stage. Every call gets a span, metrics and exactly one log line.

It wraps every later stage, so what it measures is the whole pipeline. It is also the pipeline's
last-resort guard: an unexpected exception from a later stage becomes a `terminal_error`
`S-TOOL-INTERNAL` result (logged with the exception's type and frames, never its message, which
may quote argument values), so no exception escapes to a surface. Cancellation is recorded and
re-raised.

The log line names the call's arguments and a keyed hash of its input, never their values.
"""

from __future__ import annotations

import logging
import time
import traceback
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from structlog.contextvars import bind_contextvars, reset_contextvars

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.call_record import Resolution
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.observability.consumer_metrics import ConsumerLabel
from colonnade.observability.logging import emit_event, event_enabled
from colonnade.observability.metrics import UNRESOLVED_TOOL, GatewayMetrics
from colonnade.observability.metrics_history import MetricsRollup
from colonnade.observability.redaction import InputFingerprint, argument_names
from colonnade.observability.trace_event_log import TraceEventLog
from colonnade.observability.trace_events import CallEnded, CallStarted
from colonnade.observability.tracing import (
    TRACER_NAME,
    build_tracer_provider,
    call_context,
    caller_span_attributes,
    records_spans,
    start_call_span,
)

__all__ = ["CALL_EVENT", "CANCELLED", "LOGGER_NAME", "InFlight", "Observe"]

LOGGER_NAME = "colonnade.calls"
CALL_EVENT = "call"
CANCELLED = "cancelled"
"""The status recorded (in logs and metrics, never in a CallResult) for a call whose caller went away."""

_LEVEL = {
    CallStatus.SUCCESS: logging.INFO,
    CallStatus.SUCCESS_PREP: logging.INFO,
    CallStatus.PENDING: logging.INFO,
    CallStatus.INVALID_REQUEST: logging.INFO,
    CallStatus.RETRYABLE_ERROR: logging.WARNING,
    CallStatus.TERMINAL_ERROR: logging.WARNING,
}
_IDEMPOTENCY_PREFIX = 8  # characters of an idempotency key a span shows: enough to find it, not to replay it
_EXECUTE_TOOL = "execute_tool"  # GenAI semantic conventions: the operation, and the span name's first word
_MAX_ECHO = 128  # caller-chosen strings (ids, unknown tool names) are clipped in log lines
_MAX_FRAMES = 8


class Observe:
    """Span, metrics and one structured log line per call; turns stray exceptions into results."""

    def __init__(
        self,
        metrics: GatewayMetrics | None = None,
        tracer: Tracer | None = None,
        *,
        fingerprint: InputFingerprint | None = None,
        events: TraceEventLog | None = None,
        history: MetricsRollup | None = None,
    ) -> None:
        self.metrics = metrics if metrics is not None else GatewayMetrics()
        self.tracer = tracer if tracer is not None else build_tracer_provider().get_tracer(TRACER_NAME)
        self._fingerprint = fingerprint if fingerprint is not None else InputFingerprint()
        # A provider without an exporter samples nothing: then no span is built at all (a
        # non-recording span still costs an id, a context and two context switches per call).
        self._tracing = records_spans(self.tracer)
        self.events = events
        """Where the typed `call.started` / `call.ended` events go (None: the gateway keeps none)."""
        self.history = history
        """The rolled-up metrics history a resolved call adds to (None: no store keeps one)."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        request = call.request
        trace_id = request.context.trace_id
        if self.events is not None:
            self.events.emit(
                CallStarted(
                    trace_id=trace_id,
                    request_id=request.call_id,
                    tool_id=_clip(request.tool_id),
                    fn=request.fn,
                    tenant=call.principal.tenant,
                )
            )
        span: Span | None = None
        activation = None
        if self._tracing:  # the tool is not known yet (resolution is next): the span is renamed at the end
            context = request.context
            span = start_call_span(
                self.tracer,
                _EXECUTE_TOOL,
                trace_id=trace_id,
                parent_span_id=context.parent_span_id,
                trace_flags=context.trace_flags,
                tracestate=context.tracestate,
                attributes={**_ids(request), **caller_span_attributes()},
                kind=SpanKind.SERVER,
            )
            activation = otel_context.attach(call_context(span, self.tracer))
        bound = bind_contextvars(call_id=request.call_id, trace_id=trace_id)
        result: CallResult | None = None
        failure: BaseException | None = None
        try:
            result = await next(call)
        except Exception as exc:
            failure = exc
            status, err = error("S-TOOL-INTERNAL", trace_id=trace_id)
            result = call.result(status, error=err)
        except BaseException as exc:  # cancellation or shutdown: recorded, never swallowed
            failure = exc
            raise
        finally:
            self._finish(call, call.record.resolution, span, result, failure)
            reset_contextvars(**bound)
            if activation is not None:
                otel_context.detach(activation)
        return result

    def in_flight(self) -> InFlight:
        """The stage that counts this observer's calls in flight, once their tool is known."""
        return InFlight(self.metrics)

    def _finish(
        self,
        call: Call,
        resolution: Resolution | None,
        span: Span | None,
        result: CallResult | None,
        failure: BaseException | None,
    ) -> None:
        seconds = time.perf_counter() - call.started
        status, code = _outcome(result)
        resolved = resolution.tool if resolution is not None else None
        slo_p95_s = resolution.slo_p95_s if resolution is not None else None
        timeout_ms = resolution.timeout_ms if resolution is not None else None
        tool = resolved.canonical_name if resolved is not None else None
        self.metrics.for_tool(tool or UNRESOLVED_TOOL).record(status, code, seconds, slo_p95_s=slo_p95_s)
        if self.history is not None and tool is not None:
            self.history.record(tool, status, seconds)
        consumers = self.metrics.consumers
        if consumers is not None and resolved is not None:
            consumers.record(
                tool or UNRESOLVED_TOOL, resolved.version, status, seconds, _consumer(call.principal)
            )
        if span is not None:
            if resolved is not None and span.is_recording():
                span.update_name(f"{_EXECUTE_TOOL} {resolved.canonical_name}")
                span.set_attributes(_tool_attributes(call.request, resolved, timeout_ms))
            _close_span(span, status, code, failure)
        if self.events is not None:
            self.events.emit(
                CallEnded(
                    trace_id=call.request.context.trace_id,
                    request_id=call.request.call_id,
                    tool=tool,
                    version=resolved.version if resolved is not None else None,
                    status=status,
                    code=code or None,
                    duration_ms=round(seconds * 1000, 3),
                )
            )
        level = _level_of(result, failure)
        if event_enabled(level):
            extra: dict[str, Any] = {}
            if resolved is not None:
                extra["version"] = resolved.version
            else:
                extra["tool_id"] = _clip(call.request.tool_id)
            if failure is not None:
                extra["fault"] = _exception_summary(failure)
            self._emit(level, call.request, tool, status, code, seconds * 1000, **extra)

    def _emit(
        self,
        level: int,
        request: CallRequest,
        tool: str | None,
        status: str,
        code: str,
        duration_ms: float,
        **extra: Any,
    ) -> None:
        fields = {
            "tool": tool,
            "fn": request.fn,
            "call_id": _clip(request.call_id),
            "trace_id": _clip(request.context.trace_id),
            "status": status,
            "code": code or None,
            "duration_ms": round(duration_ms, 3),
            "args": argument_names(request.input),
            "input_hash": self._fingerprint(request.input),
            **extra,
        }
        emit_event(level, LOGGER_NAME, CALL_EVENT, fields)


class InFlight:
    """Counts calls in flight per tool; it sits right after resolution, when the tool is known.

    It also tells the observe stage which tool the call resolved to, on the call's record (shared
    by every copy of the call: `calls/call_record.py`), so a call that ends in an exception or a
    cancellation is still counted under its tool.
    """

    def __init__(self, metrics: GatewayMetrics) -> None:
        self.metrics = metrics

    async def __call__(self, call: Call, next: Next) -> CallResult:
        p95_ms = call.manifest.slo.p95_latency_ms_max
        timeout_ms = round((call.deadline - call.started) * 1000, 3)
        slo_p95_s = p95_ms / 1000 if p95_ms is not None else None
        call.record.resolution = Resolution(call.tool, slo_p95_s, timeout_ms)
        gauge = self.metrics.for_tool(call.tool.canonical_name).in_flight
        gauge.inc()
        try:
            return await next(call)
        finally:
            gauge.dec()


def _outcome(result: CallResult | None) -> tuple[str, str]:
    """(status, error code) as metric labels; '' when there is no code."""
    if result is None:
        return CANCELLED, ""
    return result.status.value, result.error.code if result.error is not None else ""


def _level_of(result: CallResult | None, failure: BaseException | None) -> int:
    if failure is not None:
        return logging.ERROR if isinstance(failure, Exception) else logging.WARNING
    return _LEVEL.get(result.status, logging.INFO) if result is not None else logging.WARNING


def _close_span(span: Span, status: str, code: str, failure: BaseException | None) -> None:
    if span.is_recording():
        outcome = {"colonnade.status": status}  # one update of the span's attributes: each takes a lock
        if code:
            outcome["colonnade.error_code"] = outcome["error.type"] = code
        if failure is not None:
            outcome["exception.type"] = type(failure).__qualname__
        elif status == CANCELLED:
            outcome["error.type"] = CANCELLED
        span.set_attributes(outcome)
        if status not in (CallStatus.SUCCESS, CallStatus.SUCCESS_PREP, CallStatus.PENDING):
            span.set_status(Status(StatusCode.ERROR, code or status))
    span.end()


def _exception_summary(failure: BaseException) -> dict[str, Any]:
    """Type and innermost frames: enough to find the fault, without a message that may quote input."""
    frames = traceback.extract_tb(failure.__traceback__)[-_MAX_FRAMES:]
    return {
        "type": f"{type(failure).__module__}.{type(failure).__qualname__}",
        "frames": [f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames],
    }


def _consumer(principal: Principal) -> dict[ConsumerLabel, str]:
    """Who called, as consumer labels: the tenant, the principal's id, and its id again when an agent."""
    return {
        "tenant": principal.tenant or "",
        "principal": principal.id,
        "agent": principal.id if principal.kind is PrincipalKind.AGENT else "",
    }


def _ids(request: CallRequest) -> dict[str, str]:
    """Span attributes naming the call (clipped: callers choose these ids)."""
    return {
        "gen_ai.operation.name": _EXECUTE_TOOL,
        "gen_ai.tool.call.id": _clip(request.call_id),
        "colonnade.call_id": _clip(request.call_id),
        "colonnade.trace_id": _clip(request.context.trace_id),
        "colonnade.tool_id": _clip(request.tool_id),
    }


def _tool_attributes(request: CallRequest, tool: Tool, timeout_ms: float | None) -> dict[str, str | float]:
    """What the tool-call contract asks a call's span to name (section 9); never an argument value."""
    attributes: dict[str, str | float] = {
        "gen_ai.tool.name": tool.canonical_name,
        "colonnade.tool": tool.canonical_name,
        "colonnade.version": tool.version,
        "colonnade.determinism": tool.determinism.value,
    }
    if timeout_ms is not None:
        attributes["colonnade.timeout_ms"] = timeout_ms
    if request.fn is not None:
        attributes["colonnade.fn"] = _clip(request.fn)
    key = request.constraints.idempotency_key
    if key is not None:
        attributes["colonnade.idempotency_key_prefix"] = key[:_IDEMPOTENCY_PREFIX]
    return attributes


def _clip(value: str) -> str:
    return value if len(value) <= _MAX_ECHO else value[:_MAX_ECHO] + "…"
