"""OpenTelemetry tracing: a private tracer provider per gateway, and the span of one call.

No exporter by default, so nothing leaves the process. Without an exporter spans are not
recorded (sampling is off), which keeps them nearly free while their ids still propagate;
give `build_tracer_provider` an exporter (console, in-memory for tests, or a network one) to
record every call. The provider is never installed globally, so several gateways (and tests) in
one process keep their spans apart.

A call's span carries the call's `trace_id` as its OpenTelemetry trace id when it is 32 hex digits,
so the `trace_id` of a log line finds the trace. A call that names a `parent_span_id` continues
the caller's trace. A request the gateway sends on (to a downstream MCP server) carries the current
span as W3C `traceparent`/`tracestate` in its `_meta` (`trace_meta`), so the server continues it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, TextIO

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import Attributes

from colonnade import __version__

__all__ = [
    "TRACER_NAME",
    "build_tracer_provider",
    "console_exporter",
    "records_spans",
    "start_call_span",
    "trace_meta",
    "with_trace",
]

TRACER_NAME = "colonnade.calls"

_NEXT_TRACE_ID: ContextVar[int] = ContextVar("colonnade_next_trace_id", default=0)
_W3C = TraceContextTextMapPropagator()
_W3C_KEYS = frozenset({"traceparent", "tracestate"})


class _CallTraceIds(RandomIdGenerator):
    """Root spans take the trace id the call carries (see `start_call_span`), else a random one."""

    def generate_trace_id(self) -> int:
        return _NEXT_TRACE_ID.get() or super().generate_trace_id()

    def is_trace_id_random(self) -> bool:
        return False  # callers choose trace ids; W3C's "random" flag must not promise otherwise


def build_tracer_provider(exporter: SpanExporter | None = None, *, batch: bool = False) -> TracerProvider:
    """A provider for one gateway; spans are recorded only when there is an exporter to send them to.

    `batch=True` exports in the background (for network exporters); the default exports each span
    as it ends, which suits the console and in-memory exporters.
    """
    provider = TracerProvider(
        sampler=ALWAYS_ON if exporter is not None else ALWAYS_OFF,
        resource=Resource.create({"service.name": "colonnade", "service.version": __version__}),
        id_generator=_CallTraceIds(),
    )
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    return provider


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


def start_call_span(
    tracer: Tracer, name: str, *, trace_id: str, parent_span_id: str | None, attributes: Attributes
) -> Span:
    """Start (not activate) the span of one call, in the call's trace when its ids allow it."""
    call_trace = _hex_id(trace_id, 32)
    parent_span = _hex_id(parent_span_id, 16)
    if call_trace and parent_span:
        remote = SpanContext(call_trace, parent_span, is_remote=True)
        context = trace.set_span_in_context(NonRecordingSpan(remote))
        return tracer.start_span(name, context=context, attributes=attributes)
    token = _NEXT_TRACE_ID.set(call_trace)
    try:
        return tracer.start_span(name, attributes=attributes)
    finally:
        _NEXT_TRACE_ID.reset(token)


def trace_meta() -> dict[str, str] | None:
    """The current span as W3C `traceparent` (and `tracestate`), for a proxied request's `_meta`;
    None when no span is current (a gateway that records no spans makes none: one context lookup)."""
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier


def with_trace(meta: Mapping[str, Any], trace_context: Mapping[str, str] | None) -> Mapping[str, Any]:
    """A request's `_meta` with `trace_context` in place of any the caller sent (the two W3C keys
    travel together: a caller's `tracestate` never rides on the gateway's `traceparent`)."""
    if trace_context is None:
        return meta
    return {**{key: value for key, value in meta.items() if key not in _W3C_KEYS}, **trace_context}
