"""Span records of our own for the gateway's tracer: what the SDK's spans cost, without their machinery.

A call records two spans when traces are exported (the call's `execute_tool` span and its backend
request). The SDK's span validates every attribute into a bounded, locked mapping, keeps bounded
event and link lists and copies itself into a readable span at its end: about 100 us of CPU per
call on this project's measurements, where the export budget is 30 us (issue 29). A `CallSpan` is
both the live span (the API's `Span`) and its readable record (the SDK's `ReadableSpan`, which the
exporters, processors and the `otlp_wire` encoder read): a plain dict of attributes the gateway
itself writes, an event list, and one hand-over to the span processors when it ends.

What is given up, on purpose: attribute and event count limits (the gateway writes a fixed, small
set), value validation beyond dropping None (every value is the gateway's own str/int/float/bool),
and exception messages (an exception is recorded by its type only: a message may quote argument
values). Sampling, ids, parents, trace state and the span processors work as the SDK's do.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import (
    Event,
    ReadableSpan,
    SpanProcessor,
    SynchronousMultiSpanProcessor,
    Tracer,
    TracerProvider,
)
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, DEFAULT_ON, Sampler
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util import types

__all__ = ["CallSpan", "CallTracer", "CallTracerProvider"]

_UNSET = Status(StatusCode.UNSET)
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NOT_SAMPLED = TraceFlags(TraceFlags.DEFAULT)


def _clean(attributes: types.Attributes) -> dict[str, Any]:
    return {key: value for key, value in attributes.items() if value is not None} if attributes else {}


class CallSpan(trace_api.Span, ReadableSpan):
    """A recording span that is its own readable record; ended once, then read-only."""

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        *,
        resource: Resource,
        scope: InstrumentationScope,
        kind: SpanKind,
        attributes: types.Attributes,
        processor: SpanProcessor,
        start_time: int | None,
    ) -> None:
        ReadableSpan.__init__(
            self,
            name,
            context,
            parent,
            resource,
            _clean(attributes),
            [],
            (),
            kind,
            None,
            _UNSET,
            start_time if start_time is not None else time.time_ns(),
            None,
            scope,
        )
        self._processor = processor

    def get_span_context(self) -> SpanContext:
        return self._context  # type: ignore[return-value]  # always set for a CallSpan

    def is_recording(self) -> bool:
        return self._end_time is None

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        if self._end_time is None and value is not None:
            self._attributes[key] = value  # type: ignore[index]  # a plain dict for a CallSpan

    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        if self._end_time is None:
            self._attributes.update(_clean(attributes))  # type: ignore[union-attr]

    def add_event(self, name: str, attributes: types.Attributes = None, timestamp: int | None = None) -> None:
        if self._end_time is None:
            stamp = timestamp if timestamp is not None else time.time_ns()
            self._events.append(Event(name, _clean(attributes), stamp))  # type: ignore[attr-defined]

    def update_name(self, name: str) -> None:
        if self._end_time is None:
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self._end_time is not None:
            return
        chosen = status if isinstance(status, Status) else Status(status, description)
        if self._status.status_code is StatusCode.OK and chosen.status_code is not StatusCode.OK:
            return  # OK is final, as the specification says
        self._status = chosen

    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """The exception's type only: its message and stack may quote argument values."""
        self.add_event(
            "exception",
            {"exception.type": type(exception).__qualname__, **_clean(attributes)},
            timestamp,
        )

    def end(self, end_time: int | None = None) -> None:
        if self._end_time is not None:
            return
        self._end_time = end_time if end_time is not None else time.time_ns()
        self._processor.on_end(self)


class CallTracer(trace_api.Tracer):
    """Starts `CallSpan`s with the provider's sampler, ids, resource and processors."""

    def __init__(
        self,
        *,
        sampler: Sampler,
        resource: Resource,
        processor: SynchronousMultiSpanProcessor,
        ids: IdGenerator,
        scope: InstrumentationScope,
    ) -> None:
        self.sampler = sampler
        self.resource = resource
        self.span_processor = processor
        self.id_generator = ids
        self.scope = scope

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        # The API's default would need a span class of the SDK; the gateway never uses it.
        return trace_api.use_span(self.start_span(*args, **kwargs), end_on_exit=True)

    def start_span(
        self,
        name: str,
        context: otel_context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[trace_api.Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace_api.Span:
        parent: SpanContext | None = trace_api.get_current_span(context).get_span_context()
        if parent is None or not parent.is_valid:
            parent = None
            trace_id = self.id_generator.generate_trace_id()
        else:
            trace_id = parent.trace_id
        sampled, state, attributes = self._sample(context, parent, trace_id, name, kind, attributes, links)
        flags = _SAMPLED if sampled else _NOT_SAMPLED
        random_ids = parent.trace_flags.random_trace_id if parent else self.id_generator.is_trace_id_random()
        if random_ids:
            flags = TraceFlags(flags | TraceFlags.RANDOM_TRACE_ID)
        span_context = SpanContext(
            trace_id,
            self.id_generator.generate_span_id(),
            is_remote=False,
            trace_flags=flags,
            trace_state=state,
        )
        if not sampled and attributes is None:
            return trace_api.NonRecordingSpan(span_context)
        span = CallSpan(
            name,
            span_context,
            parent,
            resource=self.resource,
            scope=self.scope,
            kind=kind,
            attributes=attributes,
            processor=self.span_processor,
            start_time=start_time,
        )
        self.span_processor.on_start(span, parent_context=context)  # type: ignore[arg-type]
        return span

    def _sample(
        self,
        context: otel_context.Context | None,
        parent: SpanContext | None,
        trace_id: int,
        name: str,
        kind: SpanKind,
        attributes: types.Attributes,
        links: Sequence[trace_api.Link] | None,
    ) -> tuple[bool, trace_api.TraceState | None, types.Attributes]:
        """(sampled, trace state, attributes; None when not recorded). The two samplers an exporting
        gateway uses by default are answered here; any other is asked as the SDK asks it."""
        state = parent.trace_state if parent is not None else None
        if self.sampler is ALWAYS_ON:
            return True, state, attributes or {}
        if self.sampler is DEFAULT_ON:
            if parent is None or parent.trace_flags.sampled:
                return True, state, attributes or {}
            return False, state, None
        result = self.sampler.should_sample(context, trace_id, name, kind, attributes, links)
        recorded = result.decision.is_recording()  # type: ignore[no-untyped-call]
        return (
            result.decision.is_sampled(),  # type: ignore[no-untyped-call]
            result.trace_state,
            (result.attributes or {}) if recorded else None,
        )


class CallTracerProvider(TracerProvider):
    """The SDK's provider (processors, shutdown, flush, OTEL_SDK_DISABLED) handing out `CallTracer`s."""

    def __init__(
        self,
        *,
        sampler: Sampler,
        resource: Resource,
        id_generator: IdGenerator,
        shutdown_on_exit: bool = True,
    ) -> None:
        self._processors = SynchronousMultiSpanProcessor()  # type: ignore[no-untyped-call]
        super().__init__(
            sampler=sampler,
            resource=resource,
            id_generator=id_generator,
            active_span_processor=self._processors,
            shutdown_on_exit=shutdown_on_exit,
        )
        self._call_tracers: dict[tuple[str, str, str | None], CallTracer] = {}

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: types.Attributes = None,
    ) -> trace_api.Tracer:
        made = super().get_tracer(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )
        if not isinstance(made, Tracer):
            return made  # OTEL_SDK_DISABLED: the SDK's no-op tracer
        key = (instrumenting_module_name, instrumenting_library_version or "", schema_url)
        tracer = self._call_tracers.get(key)
        if tracer is None:
            tracer = self._call_tracers[key] = CallTracer(
                sampler=self.sampler,
                resource=self.resource,
                processor=self._processors,
                ids=self.id_generator,
                scope=InstrumentationScope(key[0], key[1], schema_url, attributes),
            )
        return tracer
