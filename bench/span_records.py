"""What do a call's spans cost to record and to encode? The SDK's spans against the gateway's own.

One "call" here is what an exporting gateway records per REST or MCP call: the call's span
(`execute_tool ...` with the contract's and the MCP attributes) and one child span for the backend
request, started, given their outcome and ended. Both providers run the same code, with the same
sampler (parent-based always-on, the OpenTelemetry default) and a span processor that queues the
ended spans; a round then encodes the queue as one OTLP request body (`otlp_wire.encode_spans`), as
the export thread does. Rounds alternate between the two providers and the medians of CPU per call
are printed: recording alone, and recording plus encoding. No network and no gateway, so the figures
compare the span machinery itself even on a busy machine (`bench/telemetry_export.py` measures a
whole gateway's export).

Run: .venv/bin/python bench/span_records.py [--calls 5000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import DEFAULT_ON
from opentelemetry.util.types import AnyValue
from rich.console import Console
from rich.table import Table

from colonnade.config import TelemetrySettings
from colonnade.observability.call_spans import CallTracerProvider
from colonnade.observability.otlp_wire import encode_spans
from colonnade.observability.tracing import TRACER_NAME, resource_for

CALL_ATTRIBUTES: dict[str, AnyValue] = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "acme:crm:get_customer",
    "gen_ai.tool.type": "function",
    "colonnade.tenant": "acme",
    "colonnade.api": "crm",
    "colonnade.tool.version": "1.2.0",
    "colonnade.side_effects": "read",
    "mcp.method.name": "tools/call",
    "jsonrpc.request.id": "17",
    "mcp.protocol.version": "2026-07-28",
    "mcp.session.id": "5f2a9c0e1b7d4e3a",
}
BACKEND_ATTRIBUTES: dict[str, AnyValue] = {
    "http.request.method": "GET",
    "server.address": "127.0.0.1",
    "server.port": 8901,
    "url.template": "/customers/{customer_id}",
}


class _Queue(SpanProcessor):
    """Keeps ended spans, as the bounded export's queue does."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


def _provider(kind: str) -> tuple[TracerProvider, _Queue]:
    queue = _Queue()
    resource = resource_for(TelemetrySettings())
    if kind == "sdk":
        provider = TracerProvider(sampler=DEFAULT_ON, resource=resource, shutdown_on_exit=False)
    else:
        provider = CallTracerProvider(
            sampler=DEFAULT_ON, resource=resource, id_generator=RandomIdGenerator(), shutdown_on_exit=False
        )
    provider.add_span_processor(queue)
    return provider, queue


def _calls(tracer: trace.Tracer, n: int) -> None:
    for _ in range(n):
        span = tracer.start_span("execute_tool acme:crm:get_customer", attributes=CALL_ATTRIBUTES)
        child = tracer.start_span(
            "GET /customers/{customer_id}",
            context=trace.set_span_in_context(span),
            attributes=BACKEND_ATTRIBUTES,
            kind=trace.SpanKind.CLIENT,
        )
        child.set_attributes({"http.response.status_code": 200})
        child.end()
        span.set_attributes({"colonnade.outcome": "success", "colonnade.retries": 0})
        span.end()


def _round(kind: str, n: int) -> tuple[float, float]:
    """(record, record + encode) CPU microseconds per call."""
    provider, queue = _provider(kind)
    tracer = provider.get_tracer(TRACER_NAME)
    start = time.process_time()
    _calls(tracer, n)
    recorded = time.process_time()
    body = encode_spans(queue.spans)
    encoded = time.process_time()
    assert len(queue.spans) == 2 * n and body
    provider.shutdown()
    return (recorded - start) / n * 1e6, (encoded - start) / n * 1e6


def main(calls: int, rounds: int) -> None:
    costs: dict[str, list[tuple[float, float]]] = {"sdk": [], "own": []}
    for kind in costs:
        _round(kind, 500)  # warm up
    for index in range(rounds):
        for kind in ("sdk", "own") if index % 2 == 0 else ("own", "sdk"):
            costs[kind].append(_round(kind, calls))
    table = Table(title=f"Two spans per call: {calls} calls x {rounds} rounds, medians (CPU us per call)")
    for column in ("spans", "record", "record + encode"):
        table.add_column(column, justify="right" if column != "spans" else "left")
    labels = {"sdk": "OpenTelemetry SDK spans", "own": "CallSpan (observability/call_spans.py)"}
    for kind, label in labels.items():
        table.add_row(label, *(f"{statistics.median(c[i] for c in costs[kind]):.1f}" for i in (0, 1)))
    Console().print(table)
    ratio = _ratios(costs["own"], costs["sdk"])
    print(f"CallSpan / SDK, paired by round: record {ratio[0]:.2f}x, record + encode {ratio[1]:.2f}x")


def _ratios(own: Sequence[tuple[float, float]], sdk: Sequence[tuple[float, float]]) -> tuple[float, float]:
    pairs = list(zip(own, sdk, strict=True))
    return (
        statistics.median(o[0] / s[0] for o, s in pairs),
        statistics.median(o[1] / s[1] for o, s in pairs),
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    main(args.calls, args.rounds)
