"""What does the observe stage (span, metrics, one log line) add to every call?

N calls run through a pipeline whose last stage answers at once, with and without the observe
stage in front; the difference is the stage's own cost. Log lines are rendered as JSON and written
to /dev/null, as they would be to a pipe in production. Variants: logging filtered out (level
warning, successful calls log at info), spans recorded into an in-memory exporter, and the typed
trace events (`call.started`, `call.ended`) kept in memory, and also appended to a JSONL file by
the sink's thread (its CPU counts: it is this process's).
Each variant runs several rounds; the table shows the median round's microseconds per call, as
wall-clock time and as this process's CPU time (the steadier number on a busy machine).

Run: .venv/bin/python bench/observe_overhead.py [--calls 20000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import TextIO

import yaml
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rich.console import Console
from rich.table import Table

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import Manifests, ToolManifest
from colonnade.calls.pipeline import Next, Pipeline, Stage
from colonnade.calls.stages.observe import Observe
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import Contract
from colonnade.observability.logging import configure_logging
from colonnade.observability.metrics import GatewayMetrics
from colonnade.observability.trace_event_log import TraceEventLog
from colonnade.observability.tracing import TRACER_NAME, build_tracer_provider

ROOT = Path(__file__).resolve().parents[1]
TOOL = "acme:crm:get_customer"


class Answer:
    """The last stage: ends every call at once, so only the stages in front of it are measured."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        return call.result(CallStatus.SUCCESS, output={"id": "C-1001"})


def _tool() -> Tool:
    catalog = Catalog()
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    catalog.publish(Contract.model_validate(data))
    tool = catalog.get(TOOL)
    assert tool is not None
    return tool


Cost = tuple[float, float]
"""(wall-clock, CPU) microseconds per call."""


async def _round(pipeline: Pipeline, tool: Tool, request: CallRequest, n: int) -> Cost:
    manifest: ToolManifest = Manifests().for_tool(tool)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        await pipeline.run(Call.start(request, tool, manifest))
    return (time.perf_counter() - wall) / n * 1e6, (time.process_time() - cpu) / n * 1e6


async def _measure(stages: list[Stage], tool: Tool, n: int, rounds: int) -> Cost:
    pipeline = Pipeline(stages)
    request = CallRequest(tool_id=TOOL, input={"customer_id": "C-1001"})
    await _round(pipeline, tool, request, min(n, 2000))  # warm caches and metric children
    costs = [await _round(pipeline, tool, request, n) for _ in range(rounds)]
    return statistics.median(c[0] for c in costs), statistics.median(c[1] for c in costs)


def _observed(observe: Observe) -> list[Stage]:
    """Observe with its in-flight counter, as the gateway places them around resolution."""
    return [observe, observe.in_flight(), Answer()]


async def main(n: int, rounds: int, devnull: TextIO) -> None:
    tool = _tool()
    configure_logging("info", stream=devnull, renderer="json")
    bare = await _measure([Answer()], tool, n, rounds)
    logged = await _measure(_observed(Observe(GatewayMetrics())), tool, n, rounds)
    exporter = InMemorySpanExporter()
    tracer = build_tracer_provider(exporter).get_tracer(TRACER_NAME)
    traced = await _measure(_observed(Observe(GatewayMetrics(), tracer)), tool, n, rounds)
    exporter.clear()
    kept = await _measure(_observed(Observe(GatewayMetrics(), events=TraceEventLog())), tool, n, rounds)
    with tempfile.TemporaryDirectory() as folder:
        from colonnade.observability.event_sinks import JsonlSink

        sink = JsonlSink(Path(folder) / "events.jsonl")
        written_log = TraceEventLog(sinks=[sink])
        written = await _measure(_observed(Observe(GatewayMetrics(), events=written_log)), tool, n, rounds)
        written_log.close()
    configure_logging("warning", stream=devnull, renderer="json")
    quiet = await _measure(_observed(Observe(GatewayMetrics())), tool, n, rounds)

    table = Table(title=f"observe stage overhead ({n} calls x {rounds} rounds, median round)")
    table.add_column("pipeline")
    table.add_column("wall µs/call", justify="right")
    table.add_column("added (wall)", justify="right")
    table.add_column("CPU µs/call", justify="right")
    table.add_column("added (CPU)", justify="right")
    table.add_row("answer only (baseline)", f"{bare[0]:.1f}", "", f"{bare[1]:.1f}", "")
    for label, (wall, cpu) in (
        ("observe (default: JSON line, no exporter)", logged),
        ("observe, spans recorded (in-memory exporter)", traced),
        ("observe, trace events kept in memory", kept),
        ("observe, trace events kept and written to JSONL", written),
        ("observe, log level warning (no line)", quiet),
    ):
        table.add_row(label, f"{wall:.1f}", f"{wall - bare[0]:.1f}", f"{cpu:.1f}", f"{cpu - bare[1]:.1f}")
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per variant")
    args = parser.parse_args()
    with open(os.devnull, "w") as sink:
        asyncio.run(main(args.calls, args.rounds, sink))
