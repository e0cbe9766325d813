"""The `mcp` adapter: executes a tool of a downstream MCP server on that server's pooled session.

It knows nothing of governance: the pipeline has authorized, validated and bounded the call before
it gets here. It relays the caller's protocol facets (progress, logs, questions, input rounds)
through the `Relay` of the call's channel, and reports what happened as an `AdapterOutcome` that
carries the server's own answer (`answer`), for the surfaces that pass it on. One span per
proxied call, in the call's trace, when the gateway records spans: current while the call runs,
so the request to the server carries it in `_meta` (W3C `traceparent`/`tracestate`,
`Upstream.exchange`) and the server's spans join the caller's trace. A gateway that records
none creates no span here.
"""

from __future__ import annotations

import time
from dataclasses import replace

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, StatusCode, Tracer
from pydantic import ValidationError

from colonnade.adapters.credentials import CredentialRefused, UpstreamCredentials, UpstreamGrant, refused
from colonnade.adapters.mcp.outcomes import (
    down,
    error_outcome,
    held,
    malformed,
    result_outcome,
    sandbox_killed,
    timed_out,
)
from colonnade.adapters.mcp.pool import McpPool
from colonnade.adapters.mcp.upstream import Upstream
from colonnade.adapters.outcome import MALFORMED, AdapterOutcome
from colonnade.adapters.registry import Invocation
from colonnade.catalog.bindings import McpBinding
from colonnade.config import UpstreamAuth
from colonnade.mcp_relay.answer import UpstreamAnswer, UpstreamDown, UpstreamHeld
from colonnade.mcp_relay.relay import Relay, relay_of
from colonnade.observability.tracing import records_spans, start_call_span

__all__ = ["McpTools"]


class McpTools:
    def __init__(
        self, pool: McpPool, *, tracer: Tracer | None = None, credentials: UpstreamCredentials | None = None
    ) -> None:
        self.pool = pool
        self.credentials = credentials if credentials is not None else UpstreamCredentials()
        self.tracer = tracer if tracer is not None and records_spans(tracer) else None

    async def execute(self, invocation: Invocation) -> AdapterOutcome:
        binding = invocation.tool.binding
        assert isinstance(binding, McpBinding), "the execute stage hands this adapter mcp bindings only"
        relay = relay_of(invocation.channel)
        upstream = self.pool.for_caller(binding.server, handshake_era=relay.needs_handshake_session)
        if upstream is None:
            return down(f"server {binding.server!r} is not configured in this gateway any more")
        span = self._span(invocation, binding)
        if span is None:
            return await self._call(upstream, binding, invocation, relay)
        activation = otel_context.attach(trace.set_span_in_context(span))
        try:
            outcome = await self._call(upstream, binding, invocation, relay)
        finally:
            otel_context.detach(activation)
        span.set_attribute("colonnade.outcome", outcome.kind.value)
        if not outcome.ok:
            span.set_status(StatusCode.ERROR, outcome.error_code or "")
        span.end()
        return outcome

    async def _call(
        self, upstream: Upstream, binding: McpBinding, invocation: Invocation, relay: Relay
    ) -> AdapterOutcome:
        started = time.perf_counter()

        def elapsed() -> float:
            return round((time.perf_counter() - started) * 1000, 3)

        grant: UpstreamGrant | None = None
        try:
            spec = upstream.settings.auth
            if spec is not None and not isinstance(spec, UpstreamAuth):
                grant = await self.credentials.grant(spec, invocation.principal)
            raw = await upstream.call_tool(
                binding.tool,
                invocation.arguments,
                relay=relay,
                timeout_s=invocation.timeout_s,
                credential=grant.header() if grant is not None else None,
            )
        except CredentialRefused as exc:
            return refused(exc)
        except UpstreamHeld as exc:
            return held(exc.code, str(exc))
        except UpstreamDown as exc:
            return down(str(exc))
        except TimeoutError as exc:
            return timed_out(str(exc), elapsed())
        except MCPError as exc:
            killed = await upstream.killed_by_sandbox() if exc.error.code == CONNECTION_CLOSED else None
            if killed is not None:
                return sandbox_killed(f"server {binding.server!r}: {killed}", elapsed())
            return replace(error_outcome(exc, elapsed()), answer=UpstreamAnswer(error=exc))
        except ValidationError as exc:
            first = exc.errors()[0]["msg"] if exc.errors() else str(exc)
            return malformed(f"server {binding.server!r} answered with an invalid result: {first}", elapsed())
        outcome = result_outcome(
            raw, elapsed(), server=binding.server, output_schema=invocation.tool.output_schema is not None
        )
        if outcome.error_code == MALFORMED:
            upstream.errors += 1
        credential = grant.audit() if grant is not None else None
        return replace(outcome, answer=UpstreamAnswer(result=raw), credential=credential)

    def _span(self, invocation: Invocation, binding: McpBinding) -> Span | None:
        if self.tracer is None:
            return None
        return start_call_span(
            self.tracer,
            "mcp.tools/call",
            trace_id=invocation.trace_id,
            parent_span_id=None,
            attributes={
                "mcp.server": binding.server,
                "mcp.tool": binding.tool,
                "colonnade.call_id": invocation.call_id,
            },
        )

    async def aclose(self) -> None:
        return None
