"""Overload: how many calls meet their deadline at 8, 32 and 64 concurrent callers, shedding off and on?

Each caller sends MCP `tools/call`s of a read (2026-07-28 stateless JSON wire, raw JSON-RPC on a
pooled client) one after the other for --seconds, every call with `timeout_ms` = --deadline-ms.
A call is on time when its answer (success) arrives within the deadline as the caller measures it,
a miss when it arrives later (or ends R-TIMEOUT-001), shed when the gateway refused it at once
(R-CAP-OVERLOAD, or 503 at the in-flight bound); a shed caller waits the retry_after_ms it was
given before its next call, as the error's fix asks. Two gateways of the same build run side by
side: one with `server.shed_late_calls: false` and no bound on calls in flight, one with the
defaults; their rows are measured in turn, round after round, and added up.
Also shown: the median time a call spent inside the pipeline (from the result's metrics) next to
the median the caller saw; the difference is the queue in front of the pipeline and behind it.
"late > 100 ms" counts the admitted calls (answered, not shed) whose answer arrived more than
100 ms past their deadline as the caller measured it: admission's target is 0 of those.

Run: .venv/bin/python bench/overload.py [--seconds 5] [--rounds 3] [--deadline-ms 100] [--callers 8,32,64]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import cpu_seconds, demo_stack

TOOL = "acme__crm__get_customer"
LATE_MS = 100
ARGS = {"customer_id": "C-1001"}
VERSION = "2026-07-28"
_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": "tools/call",
    "mcp-name": TOOL,
}
MODES = {
    "off": {"COLONNADE_SERVER__SHED_LATE_CALLS": "false", "COLONNADE_SERVER__MAX_CALLS_IN_FLIGHT": "1000000"},
    "on": {},
}


@dataclass
class Tally:
    outcomes: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)  # answered calls (not shed)
    pipeline_ms: list[float] = field(default_factory=list)
    late_100: int = 0  # admitted calls answered more than LATE_MS past their deadline
    worst_late_ms: float = 0.0

    def record(self, outcome: str, latency_ms: float, pipeline_ms: float | None, deadline_ms: int) -> None:
        self.outcomes[outcome] += 1
        if outcome != "shed":
            self.latencies_ms.append(latency_ms)
            self.worst_late_ms = max(self.worst_late_ms, latency_ms - deadline_ms)
            self.late_100 += latency_ms - deadline_ms > LATE_MS
        if pipeline_ms is not None and outcome != "shed":
            self.pipeline_ms.append(pipeline_ms)


def _body(i: int, deadline_ms: int) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
        "colonnade/request": {"constraints": {"timeout_ms": deadline_ms}},
    }
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": ARGS, "_meta": meta},
    }


def _classify(response: httpx2.Response, latency_ms: float, deadline_ms: int) -> tuple[str, float, Any]:
    """(outcome, ms to wait before the next call, pipeline ms or None)."""
    if response.status_code == 503:
        wait_ms = float(response.headers.get("retry-after", "1")) * 1000
        return "shed", wait_ms, None
    result = response.json()["result"]
    envelope = result["_meta"]["colonnade/result"]
    pipeline_ms = envelope.get("metrics", {}).get("duration_ms")
    error = envelope.get("error") or {}
    code = error.get("code")
    if code == "R-CAP-OVERLOAD":
        return "shed", float(error["details"]["retry_after_ms"]), pipeline_ms
    if latency_ms > deadline_ms or code == "R-TIMEOUT-001":
        return "missed", 0.0, pipeline_ms
    return ("on time" if code is None else f"error {code}"), 0.0, pipeline_ms


async def _load(
    url: str, callers: int, seconds: float, deadline_ms: int, tally: Tally | None = None
) -> Tally:
    tally = tally if tally is not None else Tally()
    limits = httpx2.Limits(max_connections=callers + 8, max_keepalive_connections=callers + 8)
    ids = iter(range(10**9))
    async with httpx2.AsyncClient(limits=limits, timeout=30.0) as http:
        stop_at = time.perf_counter() + seconds

        async def caller() -> None:
            while time.perf_counter() < stop_at:
                started = time.perf_counter()
                response = await http.post(url, json=_body(next(ids), deadline_ms), headers=_HEADERS)
                latency_ms = (time.perf_counter() - started) * 1000
                outcome, wait_ms, pipeline_ms = _classify(response, latency_ms, deadline_ms)
                tally.record(outcome, latency_ms, pipeline_ms, deadline_ms)
                if wait_ms:
                    await asyncio.sleep(min(wait_ms, max(0.0, stop_at - time.perf_counter()) * 1000) / 1000)

        await asyncio.gather(*(caller() for _ in range(callers)))
    return tally


def _p(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.0f}"


async def main(seconds: float, deadline_ms: int, callers: list[int], rounds: int) -> None:
    console = Console(width=None if sys.stdout.isatty() else 160)
    tallies = {(mode, n): Tally() for mode in MODES for n in callers}
    cpu: Counter[tuple[str, int]] = Counter()
    with contextlib.ExitStack() as stacks:
        running = {mode: stacks.enter_context(demo_stack(settings)) for mode, settings in MODES.items()}
        for stack in running.values():
            await _load(stack.mcp_url, 4, 2.0, 10_000)  # warm-up
        # Rows taken in turn, round after round: a shared machine drifts by more than the effect.
        for _ in range(rounds):
            for n in callers:
                for mode, stack in running.items():
                    before = cpu_seconds(stack.gateway_pid)
                    await _load(stack.mcp_url, n, seconds, deadline_ms, tallies[(mode, n)])
                    after = cpu_seconds(stack.gateway_pid)
                    if before is not None and after is not None:
                        cpu[(mode, n)] += after - before
    table = Table(
        title=f"overload: MCP tools/call of {TOOL}, timeout_ms={deadline_ms},"
        f" {rounds} x {seconds:g} s per row (taken in turn); a shed caller waits retry_after_ms"
    )
    columns = (
        "shedding",
        "callers",
        "answered/s",
        "on time/s",
        "missed",
        "missed %",
        f"late > {LATE_MS} ms",
        "worst late ms",
        "shed",
        "other",
        "p50 ms",
        "p99 ms",
        "pipeline p50 ms",
        "gateway CPU %",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "shedding" else "right")
    span = seconds * rounds
    for (mode, n), tally in tallies.items():
        answered = len(tally.latencies_ms)
        outcomes = tally.outcomes
        other = answered - outcomes["on time"] - outcomes["missed"]
        table.add_row(
            mode,
            str(n),
            f"{answered / span:.0f}",
            f"{outcomes['on time'] / span:.0f}",
            str(outcomes["missed"]),
            f"{100 * outcomes['missed'] / answered:.1f}" if answered else "-",
            str(tally.late_100),
            f"{max(0.0, tally.worst_late_ms):.0f}" if answered else "-",
            str(outcomes["shed"]),
            str(other),
            _p(tally.latencies_ms, 0.5),
            _p(tally.latencies_ms, 0.99),
            f"{statistics.median(tally.pipeline_ms):.1f}" if tally.pipeline_ms else "-",
            f"{cpu[(mode, n)] / span * 100:.0f}" if cpu else "n/a",
        )
    console.print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per row and round (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of all rows, taken in turn (default 3)")
    parser.add_argument("--deadline-ms", type=int, default=100, help="every call's timeout_ms (default 100)")
    parser.add_argument("--callers", default="8,32,64", help="concurrent callers per row (default 8,32,64)")
    arguments = parser.parse_args()
    counts = [int(c) for c in arguments.callers.split(",") if c.strip()]
    positive = (arguments.seconds, arguments.deadline_ms, arguments.rounds, *counts)
    if not counts or min(positive) <= 0:
        parser.error("--seconds, --rounds, --deadline-ms and --callers must be positive")
    asyncio.run(main(arguments.seconds, arguments.deadline_ms, counts, arguments.rounds))
