"""What does OTLP export add to a call? Export on vs off, in the same run, paired round by round.

Five gateways are built from the same parts in this process (the demo CRM contract against the
demo backend, a subprocess on loopback): one with no collector (the default: spans are not
recorded), one recording spans into a queue that discards them (the cost of the spans alone), one
sending only spans, one sending only the trace events (as OTLP logs), and one exporting spans,
events and metrics over OTLP/HTTP to a receiver in another process on loopback that answers
every export. Each round runs N calls through each gateway's whole pipeline (one HTTP
backend request per call), alternating the order; a recording side's round ends with a flush,
so the time spent encoding and sending its spans is inside the measurement. CPU is this process's
(all threads, the export thread included); the backend's and the receiver's are not counted, and
the backend's is the same for both sides.

Target (issue 29): export costs at most 30 us of CPU per call.

Run: .venv/bin/python bench/telemetry_export.py [--calls 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT, backend_command, free_port, stop_all, wait_http

from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings, TelemetrySettings
from colonnade.contracts.model import Contract
from colonnade.observability.logging import configure_logging
from colonnade.observability.otlp import BoundedSpanExport
from colonnade.observability.tracing import build_tracer_provider
from colonnade.runtime.gateway import Gateway

TOOL = "acme:crm:get_customer"


def receive(port: int) -> None:
    """The receiver process: answers OTLP/HTTP exports (and `/healthz`) and keeps nothing."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    async def accepted(request: object) -> Response:
        await request.body()  # type: ignore[attr-defined]
        return Response(b"", media_type="application/x-protobuf")

    async def healthz(request: object) -> Response:
        return Response(b"ok")

    app = Starlette(
        routes=[
            Route("/v1/traces", accepted, methods=["POST"]),
            Route("/v1/metrics", accepted, methods=["POST"]),
            Route("/healthz", healthz),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _catalog(backend_url: str) -> Catalog:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    data["backend"]["base_url"] = backend_url
    catalog = Catalog()
    catalog.publish(Contract.model_validate(data))
    return catalog


async def _round(gateway: Gateway, n: int, *, flush: bool) -> tuple[float, float]:
    """(CPU, wall) microseconds per call over n sequential calls."""
    request = CallRequest(tool_id=TOOL, input={"customer_id": "C-1001"})
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        result = await gateway.calls.call(request)
        assert result.status is CallStatus.SUCCESS, result.error
    if flush:
        gateway.tracer_provider.force_flush()
    return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6


def main(calls: int, rounds: int) -> None:
    configure_logging("warning")  # one info line per call would cost both sides alike: left out
    with tempfile.TemporaryDirectory(prefix="colonnade-bench-") as tmp:
        backend_port, receiver_port = free_port(), free_port()
        procs = [
            subprocess.Popen(backend_command(backend_port, Path(tmp) / "d.db"), cwd=ROOT),
            subprocess.Popen([sys.executable, __file__, "--receive", str(receiver_port)], cwd=ROOT),
        ]
        try:
            backend_url = f"http://127.0.0.1:{backend_port}"
            receiver_url = f"http://127.0.0.1:{receiver_port}"
            wait_http(f"{backend_url}/healthz", procs[0])
            wait_http(f"{receiver_url}/healthz", procs[1])
            asyncio.run(_compare(backend_url, receiver_url, calls, rounds))
        finally:
            stop_all(procs)


class _Discard(SpanExporter):
    """Takes every batch and sends nothing: what recording spans costs without encoding them."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def _compare(backend_url: str, receiver_url: str, calls: int, rounds: int) -> None:
    exporting = TelemetrySettings(otlp_endpoint=receiver_url, schedule_delay_s=1.0)
    spans_only = exporting.model_copy(update={"events_otlp": False, "metrics": False})
    events_only = exporting.model_copy(update={"traces": False, "metrics": False})
    recorded = build_tracer_provider(processor=BoundedSpanExport(_Discard(), schedule_delay_s=1.0))
    gateways = {
        "off": Gateway(Settings(), catalog=_catalog(backend_url)),
        "recorded": Gateway(Settings(), catalog=_catalog(backend_url), tracer_provider=recorded),
        "spans": Gateway(Settings(telemetry=spans_only), catalog=_catalog(backend_url)),
        "events": Gateway(Settings(telemetry=events_only), catalog=_catalog(backend_url)),
        "on": Gateway(Settings(telemetry=exporting), catalog=_catalog(backend_url)),
    }
    try:
        for gateway in gateways.values():
            await _round(gateway, 300, flush=True)  # warm pools, caches and metric children
        costs: dict[str, list[tuple[float, float]]] = {name: [] for name in gateways}
        for index in range(rounds):
            names = list(gateways) if index % 2 == 0 else list(reversed(gateways))
            for name in names:
                costs[name].append(await _round(gateways[name], calls, flush=name != "off"))
        counters = gateways["on"].telemetry.counters
    finally:
        for gateway in gateways.values():
            await gateway.aclose()
    _report(costs, calls, rounds, counters.exported if counters else 0, counters.dropped if counters else 0)


_LABELS = {
    "off": "no collector (default)",
    "recorded": "spans recorded, not sent",
    "spans": "spans sent (no trace events, no metrics)",
    "events": "trace events sent as OTLP logs (no spans, no metrics)",
    "on": "OTLP export to the receiver (spans, events, metrics)",
}


def _report(
    costs: dict[str, list[tuple[float, float]]], calls: int, rounds: int, exported: int, dropped: int
) -> None:
    table = Table(title=f"OTLP export: {calls} calls x {rounds} rounds, medians")
    for column in ("", "CPU us/call", "wall us/call", "CPU added (paired)", "wall added (paired)"):
        table.add_column(column, justify="right" if column else "left")
    for name, label in _LABELS.items():
        cpu = [c[0] - o[0] for c, o in zip(costs[name], costs["off"], strict=True)]
        wall = [c[1] - o[1] for c, o in zip(costs[name], costs["off"], strict=True)]
        table.add_row(
            label,
            f"{statistics.median(c[0] for c in costs[name]):.1f}",
            f"{statistics.median(c[1] for c in costs[name]):.1f}",
            f"{statistics.median(cpu):.1f}" if name != "off" else "",
            f"{statistics.median(wall):.1f}" if name != "off" else "",
        )
    Console().print(table)
    print(f"spans exported: {exported}, dropped: {dropped}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--receive", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.receive:
        receive(args.receive)
    else:
        main(args.calls, args.rounds)
