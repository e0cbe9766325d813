"""What does a call through Colonnade cost on top of calling the backend directly?

(a) the backend called directly with a pooled httpx2 client;
(b) the same read operation through Colonnade as an MCP tools/call on the 2026-07-28 stateless
    JSON wire (raw JSON-RPC POSTs on a pooled client, so client-library overhead is not counted);
(c) the same through the official `mcp` Client, for reference;
(d) the same call as a REST `POST /v1/calls` (the gateway's plain JSON surface, same pipeline).
Median and p99 of sequential calls, and calls/s with 8 and 32 concurrent callers, in one run.
Where /proc exists, also the CPU time the gateway and the backend processes spend per sequential
call: on a loaded 2-core machine, CPU per call is what latency is made of.

The sequential measurement runs in `--rounds` rounds, each measuring (a), (b) and (c) one after
the other, so the added latency is a paired difference per round: a shared virtual machine drifts
by more than the effect being measured, and pairing keeps that drift out of b - a.

Run: .venv/bin/python bench/call_overhead.py [--calls 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

import httpx2
from mcp import Client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import cpu_seconds, demo_stack, percentile, sequential, throughput

TOOL = "acme__crm__get_customer"
ARGS = {"customer_id": "C-1001"}
VERSION = "2026-07-28"


def _mcp_body(i: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {
            "name": TOOL,
            "arguments": ARGS,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            },
        },
    }


_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": "tools/call",
    "mcp-name": TOOL,
}


def _per_call(start: float | None, end: float | None, calls: int) -> float | None:
    """CPU milliseconds per call between two readings (the warm-up calls are a rounding error)."""
    if start is None or end is None:
        return None
    return (end - start) * 1000 / (calls + min(50, calls))


def _add(total: float | None, value: float | None) -> float | None:
    """A running sum that turns unknown (no /proc) once any reading is unknown."""
    return None if total is None or value is None else total + value


def _mean(total: float | None, rounds: int) -> float | None:
    return None if total is None else total / rounds


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


async def main(calls: int, rounds: int) -> None:
    console = Console(width=None if sys.stdout.isatty() else 140)
    with demo_stack() as stack:
        limits = httpx2.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx2.AsyncClient(limits=limits) as http, Client(stack.mcp_url) as mcp_client:
            direct_url = f"{stack.backend_url}/customers/{ARGS['customer_id']}"
            counter = iter(range(10**9))

            async def direct() -> None:
                (await http.get(direct_url)).raise_for_status()

            async def via_gateway() -> None:
                response = await http.post(stack.mcp_url, json=_mcp_body(next(counter)), headers=_HEADERS)
                response.raise_for_status()
                if b'"isError":true' in response.content:
                    raise SystemExit(f"the gateway answered an error: {response.text[:300]}")

            rest_url = stack.mcp_url.removesuffix("/mcp") + "/v1/calls"
            rest_body = {"tool_id": TOOL, "input": ARGS}

            async def via_rest() -> None:
                response = await http.post(rest_url, json=rest_body)
                response.raise_for_status()
                if b'"status":"success"' not in response.content:
                    raise SystemExit(f"the gateway answered an error: {response.text[:300]}")

            async def via_client() -> None:
                result = await mcp_client.call_tool(TOOL, ARGS)
                if result.is_error:
                    raise SystemExit(f"the gateway answered an error: {result.content}")

            paths = (
                ("(a) backend direct", direct),
                ("(b) Colonnade tools/call", via_gateway),
                ("(c) Colonnade via mcp.Client", via_client),
                ("(d) Colonnade REST POST /v1/calls", via_rest),
            )
            pids = (stack.gateway_pid, stack.backend_pid)
            samples: list[list[float]] = [[] for _ in paths]
            medians: list[list[float]] = [[] for _ in paths]
            cpu: list[list[float | None]] = [[0.0, 0.0] for _ in paths]
            for _ in range(rounds):
                for index, (_, call) in enumerate(paths):
                    before = [cpu_seconds(pid) for pid in pids]
                    taken = await sequential(call, calls)
                    samples[index] += taken
                    medians[index].append(statistics.median(taken))
                    for side, (start, pid) in enumerate(zip(before, pids, strict=True)):
                        cpu[index][side] = _add(cpu[index][side], _per_call(start, cpu_seconds(pid), calls))
            rows = []
            for index, (label, call) in enumerate(paths):
                c8 = await throughput(call, 8, calls)
                c32 = await throughput(call, 32, calls)
                gateway_cpu, backend_cpu = (_mean(total, rounds) for total in cpu[index])
                median = statistics.median(medians[index])
                p99 = percentile(samples[index], 0.99)
                rows.append((label, median, p99, c8, c32, gateway_cpu, backend_cpu))
    table = Table(
        title=f"call overhead: {rounds} x {calls} sequential calls of {TOOL} (median of the rounds' medians),"
        f" then {calls} calls at 8 and 32 callers"
    )
    columns = ("path", "median ms", "p99 ms", "calls/s @8", "calls/s @32", "gateway CPU ms", "backend CPU ms")
    for column in columns:
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, median, p99, c8, c32, gateway_cpu, backend_cpu in rows:
        timings = (f"{median:.3f}", f"{p99:.3f}", f"{c8:.0f}", f"{c32:.0f}")
        table.add_row(label, *timings, _ms(gateway_cpu), _ms(backend_cpu))
    console.print(table)
    added = [b - a for a, b in zip(medians[0], medians[1], strict=True)]
    spread = f" (rounds: {min(added):.3f} to {max(added):.3f})" if rounds > 1 else ""
    console.print(
        f"median added by the gateway (b - a, paired per round): {statistics.median(added):.3f} ms{spread};"
        f" ratio b/a: {rows[1][1] / rows[0][1]:.2f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="calls per measurement (default 1000)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of sequential (a), (b), (c) measurements (default 3)"
    )
    arguments = parser.parse_args()
    if arguments.calls < 1 or arguments.rounds < 1:
        parser.error("--calls and --rounds must be at least 1")
    asyncio.run(main(arguments.calls, arguments.rounds))
