"""What does OTLP export add to a call? Export on vs off, in the same run, paired round by round.

Two gateways are built from the same parts in this process (the demo CRM contract against the demo
backend, a subprocess on loopback): one with no collector (the default: spans are not recorded), one
exporting spans and metrics over OTLP/HTTP to a receiver in another process on loopback that
answers every export. Each round runs N calls through each gateway's whole pipeline (one HTTP
backend request per call), alternating which goes first; the export side's round ends with a flush,
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
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT, backend_command, free_port, stop_all, wait_http

from colonnade.calls.envelope import CallRequest, CallStatus
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings, TelemetrySettings
from colonnade.contracts.model import Contract
from colonnade.observability.logging import configure_logging
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


async def _compare(backend_url: str, receiver_url: str, calls: int, rounds: int) -> None:
    off = Gateway(Settings(), catalog=_catalog(backend_url))
    exporting = TelemetrySettings(otlp_endpoint=receiver_url, schedule_delay_s=1.0)
    on = Gateway(Settings(telemetry=exporting), catalog=_catalog(backend_url))
    try:
        await _round(off, 300, flush=False)  # warm pools, caches and metric children
        await _round(on, 300, flush=True)
        costs: dict[str, list[tuple[float, float]]] = {"off": [], "on": []}
        for index in range(rounds):
            order = [("off", off), ("on", on)] if index % 2 == 0 else [("on", on), ("off", off)]
            for name, gateway in order:
                costs[name].append(await _round(gateway, calls, flush=name == "on"))
        counters = on.telemetry.counters
    finally:
        await off.aclose()
        await on.aclose()
    _report(costs, calls, rounds, counters.exported if counters else 0, counters.dropped if counters else 0)


def _report(
    costs: dict[str, list[tuple[float, float]]], calls: int, rounds: int, exported: int, dropped: int
) -> None:
    cpu_diff = [on[0] - off[0] for on, off in zip(costs["on"], costs["off"], strict=True)]
    wall_diff = [on[1] - off[1] for on, off in zip(costs["on"], costs["off"], strict=True)]
    table = Table(title=f"OTLP export on vs off: {calls} calls x {rounds} rounds, median of rounds")
    for column in ("", "CPU us/call", "wall us/call"):
        table.add_column(column, justify="right" if column else "left")
    for name in ("off", "on"):
        table.add_row(
            f"export {name}",
            f"{statistics.median(c[0] for c in costs[name]):.1f}",
            f"{statistics.median(c[1] for c in costs[name]):.1f}",
        )
    added = (f"{statistics.median(cpu_diff):.1f}", f"{statistics.median(wall_diff):.1f}")
    table.add_row("added by export (paired)", *added)
    Console().print(table)
    print(f"spans exported: {exported}, dropped: {dropped}; per-round CPU differences (us):", end=" ")
    print(", ".join(f"{d:.1f}" for d in cpu_diff))


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
