"""What does a call through Colonnade cost on top of calling the backend directly?

(a) the backend called directly with a pooled httpx2 client;
(b) the same read operation through Colonnade as an MCP tools/call on the 2026-07-28 stateless
    JSON wire (raw JSON-RPC POSTs on a pooled client, so client-library overhead is not counted);
(c) the same through the official `mcp` Client, for reference.
Median and p99 of sequential calls, and calls/s with 8 and 32 concurrent callers, in one run.

Run: .venv/bin/python bench/call_overhead.py [--calls 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
from mcp import Client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import demo_stack

TOOL = "acme__crm__get_customer"
ARGS = {"customer_id": "C-1001"}
VERSION = "2026-07-28"
Call = Callable[[], Awaitable[None]]


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


async def _sequential(call: Call, n: int) -> list[float]:
    for _ in range(min(50, n)):
        await call()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


async def _throughput(call: Call, workers: int, total: int) -> float:
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return total / (time.perf_counter() - t0)


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(calls: int) -> None:
    console = Console()
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

            async def via_client() -> None:
                result = await mcp_client.call_tool(TOOL, ARGS)
                if result.is_error:
                    raise SystemExit(f"the gateway answered an error: {result.content}")

            rows = []
            for label, call in (
                ("(a) backend direct", direct),
                ("(b) Colonnade tools/call", via_gateway),
                ("(c) Colonnade via mcp.Client", via_client),
            ):
                samples = await _sequential(call, calls)
                c8 = await _throughput(call, 8, calls)
                c32 = await _throughput(call, 32, calls)
                rows.append((label, statistics.median(samples), _p(samples, 0.99), c8, c32))
    table = Table(
        title=f"call overhead: {calls} sequential calls of {TOOL}, then {calls} calls at 8 and 32 callers"
    )
    for column in ("path", "median ms", "p99 ms", "calls/s @8", "calls/s @32"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for label, median, p99, c8, c32 in rows:
        table.add_row(label, f"{median:.3f}", f"{p99:.3f}", f"{c8:.0f}", f"{c32:.0f}")
    console.print(table)
    a, b = rows[0], rows[1]
    console.print(f"median added by the gateway (b - a): {b[1] - a[1]:.3f} ms; ratio b/a: {b[1] / a[1]:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="calls per measurement (default 1000)")
    asyncio.run(main(parser.parse_args().calls))
