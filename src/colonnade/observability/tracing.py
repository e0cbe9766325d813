"""OpenTelemetry tracing: a private tracer provider per gateway, the span of one call and its children.

No collector by default, so nothing leaves the process. Without an exporter spans are not
recorded (sampling is off), which keeps them nearly free while their ids still propagate;
`observability.telemetry` builds the provider from the `telemetry:` settings (sampler, resource,
OTLP export), and tests give `build_tracer_provider` an in-memory exporter. The provider is never
installed globally, so several gateways (and tests) in one process keep their spans apart.

A call's span carries the call's `trace_id` as its OpenTelemetry trace id when it is 32 hex digits,
so the `trace_id` of a log line finds the trace. A caller's W3C `traceparent`/`tracestate` (MCP
`_meta`, REST headers: `caller_trace_fields`) becomes the call's `trace_id` and `parent_span_id`,
so the call continues the caller's trace. Stages wrap their I/O in `io_span` (the call's tracer
travels in the OpenTelemetry context the call runs in, `call_context`); a request the gateway sends
on carries the current span as `traceparent` (`trace_meta` for MCP `_meta`, `trace_headers` for HTTP).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    DEFAULT_OFF,
    DEFAULT_ON,
    ParentBased,
    Sampler,
    TraceIdRatioBased,
)
from opentelemetry.trace import (
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    StatusCode,
    TraceFlags,
    Tracer,
    TraceState,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import Attributes

from colonnade import __version__
from colonnade.config import TelemetrySettings
from colonnade.observability.call_spans import CallTracerProvider

__all__ = [
    "TRACER_NAME",
    "Traceparent",
    "build_tracer_provider",
    "call_context",
    "caller_span_attributes",
    "caller_trace_fields",
    "console_exporter",
    "io_span",
    "mcp_call_attributes",
    "parse_traceparent",
    "records_spans",
    "resource_for",
    "sampler_for",
    "start_call_span",
    "trace_headers",
    "trace_meta",
    "with_trace",
]

TRACER_NAME = "colonnade.calls"

_NEXT_TRACE_ID: ContextVar[int] = ContextVar("colonnade_next_trace_id", default=0)
_W3C = TraceContextTextMapPropagator()
_W3C_KEYS = frozenset({"traceparent", "tracestate"})
_TRACER_KEY = otel_context.create_key("colonnade.tracer")
_CALLER_KEY = otel_context.create_key("colonnade.caller_attributes")
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_MAX_TRACESTATE = 512  # W3C: at most 32 members; a longer one is dropped, not cut mid-member


class _CallTraceIds(RandomIdGenerator):
    """Root spans take the trace id the call carries (see `start_call_span`), else a random one."""

    def generate_trace_id(self) -> int:
        return _NEXT_TRACE_ID.get() or super().generate_trace_id()

    def is_trace_id_random(self) -> bool:
        return False  # callers choose trace ids; W3C's "random" flag must not promise otherwise


def build_tracer_provider(
    exporter: SpanExporter | None = None,
    *,
    batch: bool = False,
    processor: SpanProcessor | None = None,
    sampler: Sampler | None = None,
    resource: Resource | None = None,
) -> TracerProvider:
    """A provider for one gateway; spans are recorded only when there is an exporter to send them to.

    Its tracers make `call_spans.CallSpan`s, the gateway's own light span records.

    `batch=True` exports in the background (for network exporters); the default exports each span
    as it ends, which suits the console and in-memory exporters. A `processor` (the bounded OTLP
    export) is used as given.
    """
    exporting = exporter is not None or processor is not None
    provider = CallTracerProvider(
        sampler=(sampler or ALWAYS_ON) if exporting else ALWAYS_OFF,
        resource=resource or resource_for(TelemetrySettings()),
        id_generator=_CallTraceIds(),
    )
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    if processor is not None:
        provider.add_span_processor(processor)
    return provider


def sampler_for(settings: TelemetrySettings) -> Sampler:
    """The sampler `OTEL_TRACES_SAMPLER` (`telemetry.traces_sampler`) names, with its ratio."""
    ratio = settings.traces_sampler_arg if settings.traces_sampler_arg is not None else 1.0
    return {
        "always_on": ALWAYS_ON,
        "always_off": ALWAYS_OFF,
        "traceidratio": TraceIdRatioBased(ratio),
        "parentbased_always_on": DEFAULT_ON,
        "parentbased_always_off": DEFAULT_OFF,
        "parentbased_traceidratio": ParentBased(TraceIdRatioBased(ratio)),
    }[settings.traces_sampler]


def resource_for(settings: TelemetrySettings) -> Resource:
    """`service.name`, `service.version` and the configured resource attributes (they win)."""
    return Resource.create(
        {
            "service.name": settings.service_name,
            "service.version": __version__,
            **settings.resource_attributes,
        }
    )


@dataclass(frozen=True, slots=True)
class Traceparent:
    """A caller's W3C trace context, as read from a `traceparent` (and `tracestate`)."""

    trace_id: str
    parent_span_id: str
    flags: int
    tracestate: str | None = None


def parse_traceparent(value: object, tracestate: object = None) -> Traceparent | None:
    """The trace context a W3C `traceparent` names; None for anything the recommendation rejects."""
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.fullmatch(value.strip())
    if match is None:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest) or not int(trace_id, 16) or not int(span_id, 16):
        return None
    state = tracestate.strip() if isinstance(tracestate, str) else None
    state = state if state and len(state) <= _MAX_TRACESTATE else None
    return Traceparent(trace_id, span_id, int(flags, 16), state)


def records_spans(tracer: Tracer) -> bool:
    """Whether spans of this tracer can be recorded: a provider without an exporter samples none."""
    sampler = getattr(tracer, "sampler", None)
    return sampler is not None and sampler is not ALWAYS_OFF


def console_exporter(stream: TextIO | None = None) -> ConsoleSpanExporter:
    """Spans as JSON on stderr (never stdout: in stdio mode that is the MCP protocol)."""
    return ConsoleSpanExporter(service_name="colonnade", out=stream if stream is not None else sys.stderr)


def _hex_id(value: str | None, digits: int) -> int:
    if value is None or len(value) != digits:
        return 0
    try:
        return int(value, 16)
    except ValueError:
        return 0


def caller_trace_fields(traceparent: object, tracestate: object = None) -> dict[str, Any]:
    """A call context's trace fields from W3C headers (HTTP) or `_meta` keys (MCP); {} when invalid."""
    parent = parse_traceparent(traceparent, tracestate)
    if parent is None:
        return {}
    return {
        "trace_id": parent.trace_id,
        "parent_span_id": parent.parent_span_id,
        "trace_flags": parent.flags,
        "tracestate": parent.tracestate,
    }


def start_call_span(
    tracer: Tracer,
    name: str,
    *,
    trace_id: str,
    parent_span_id: str | None,
    attributes: Attributes,
    trace_flags: int | None = None,
    tracestate: str | None = None,
    kind: SpanKind = SpanKind.INTERNAL,
) -> Span:
    """Start (not activate) the span of one call, in the call's trace when its ids allow it.

    A parent named without flags counts as sampled (the caller asked for this trace to go on)."""
    call_trace = _hex_id(trace_id, 32)
    parent_span = _hex_id(parent_span_id, 16)
    if call_trace and parent_span:
        flags = TraceFlags(trace_flags if trace_flags is not None else TraceFlags.SAMPLED)
        state = _trace_state(tracestate)
        remote = SpanContext(call_trace, parent_span, is_remote=True, trace_flags=flags, trace_state=state)
        context = trace.set_span_in_context(NonRecordingSpan(remote))
        return tracer.start_span(name, context=context, attributes=attributes, kind=kind)
    token = _NEXT_TRACE_ID.set(call_trace)
    try:
        return tracer.start_span(name, attributes=attributes, kind=kind)
    finally:
        _NEXT_TRACE_ID.reset(token)


def _trace_state(header: str | None) -> TraceState | None:
    return TraceState.from_header([header]) or None if header else None


def call_context(span: Span, tracer: Tracer) -> otel_context.Context:
    """The context a call runs in: its span current, and the tracer its stages' `io_span`s use."""
    return otel_context.set_value(_TRACER_KEY, tracer, trace.set_span_in_context(span))


@contextmanager
def io_span(
    name: str, attributes: Attributes = None, *, kind: SpanKind = SpanKind.INTERNAL
) -> Iterator[Span | None]:
    """A child span of the current call around a stage's I/O (store, policy, backend), current inside.

    None when the call records no span (one context lookup). An exception marks the span with its
    type only (`error.type`): its message may quote argument values.
    """
    tracer = otel_context.get_value(_TRACER_KEY)
    if not isinstance(tracer, Tracer):
        yield None
        return
    span = tracer.start_span(name, attributes=attributes, kind=kind)
    token = otel_context.attach(trace.set_span_in_context(span))  # cheaper than start_as_current_span
    try:
        yield span
    except BaseException as exc:
        span.set_attributes({"error.type": type(exc).__qualname__})
        span.set_status(StatusCode.ERROR)
        raise
    finally:
        otel_context.detach(token)
        span.end()


def trace_meta() -> dict[str, str] | None:
    """The current span as W3C `traceparent` (and `tracestate`), for a proxied request's `_meta`;
    None when no span is current (a gateway that records no spans makes none: one context lookup)."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    # What the W3C propagator writes, formatted here: the propagator costs a context lookup more.
    carrier = {"traceparent": f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"}
    if context.trace_state:
        carrier["tracestate"] = context.trace_state.to_header()
    return carrier


@contextmanager
def mcp_call_attributes(
    *, request_id: object, session_id: str | None, protocol_version: str | None
) -> Iterator[None]:
    """What an MCP surface knows of a `tools/call` (semantic conventions for MCP), for the call's span.

    The session id is shown as a short hash: in the handshake era it lets its holder use the session.
    """
    attributes: dict[str, str] = {"mcp.method.name": "tools/call"}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)[:128]
    if session_id:
        attributes["mcp.session.id"] = hashlib.sha256(session_id.encode()).hexdigest()[:16]
    if protocol_version:
        attributes["mcp.protocol.version"] = protocol_version
    token = otel_context.attach(otel_context.set_value(_CALLER_KEY, attributes))
    try:
        yield
    finally:
        otel_context.detach(token)


def caller_span_attributes() -> Mapping[str, str]:
    """The attributes a surface put in the context for the call it runs (`mcp_call_attributes`)."""
    found = otel_context.get_value(_CALLER_KEY)
    return found if isinstance(found, dict) else {}


def trace_headers() -> dict[str, str]:
    """The current span as W3C `traceparent`/`tracestate` HTTP headers; empty when none is current."""
    return trace_meta() or {}


def with_trace(meta: Mapping[str, Any], trace_context: Mapping[str, str] | None) -> Mapping[str, Any]:
    """A request's `_meta` with `trace_context` in place of any the caller sent (the two W3C keys
    travel together: a caller's `tracestate` never rides on the gateway's `traceparent`)."""
    if trace_context is None:
        return meta
    return {**{key: value for key, value in meta.items() if key not in _W3C_KEYS}, **trace_context}
