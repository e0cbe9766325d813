"""What does Colonnade add to a call of a downstream MCP server?

A trivial `echo` tool on an upstream Streamable HTTP server (the `mcp` SDK, `bench/echo_upstream.py`)
is called with the official `mcp.Client`:
(a) on the upstream directly;
(b) through Colonnade's aggregate endpoint `/mcp` (`default__echo__echo`, the whole call pipeline);
(c) through Colonnade's own endpoint for that server, `/servers/echo/mcp` (original name, pipeline).
Each in both protocol eras (2026-07-28 and the 2025-11-25 handshake era). Median and p99 of sequential
calls, taken in `--rounds` rounds of (a), (b), (c) one after the other so that the added latency is a
difference paired per round; calls/s at 8 and 32 concurrent callers; and, where /proc exists, the
CPU the gateway process spends per call. The client's own cost is in every row, so compare rows.

Run: .venv/bin/python bench/federation_overhead.py [--calls 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import yaml
from mcp import Client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import COLONNADE, Call, cpu_seconds, free_port, percentile, sequential, throughput, wait_http

HERE = Path(__file__).resolve().parent
ERAS = (("2026-07-28", "auto"), ("2025-11-25", "legacy"))


@dataclass(frozen=True)
class Federation:
    upstream: str
    gateway: str
    gateway_pid: int


@contextlib.contextmanager
def federation() -> Iterator[Federation]:
    """The echo upstream and a gateway with it as its only downstream server, as processes."""
    with tempfile.TemporaryDirectory(prefix="colonnade-bench-") as name, contextlib.ExitStack() as logs:
        tmp = Path(name)
        upstream_port, gateway_port = free_port(), free_port()
        upstream = f"http://127.0.0.1:{upstream_port}/mcp"
        processes: list[subprocess.Popen[bytes]] = []
        try:
            processes.append(
                subprocess.Popen(
                    [sys.executable, str(HERE / "echo_upstream.py"), "--port", str(upstream_port)],
                    stdout=logs.enter_context((tmp / "upstream.log").open("wb")),
                    stderr=subprocess.STDOUT,
                )
            )
            wait_http(upstream, processes[-1], any_answer=True)
            config = {
                "data_dir": str(tmp / "data"),
                "servers": [{"name": "echo", "transport": "http", "url": upstream}],
            }
            (tmp / "colonnade.yaml").write_text(yaml.safe_dump(config))
            env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
            processes.append(  # the gateway logs one line per call: to a file, not the terminal
                subprocess.Popen(
                    [str(COLONNADE), "serve", "--port", str(gateway_port)],
                    cwd=tmp,
                    env=env,
                    stdout=logs.enter_context((tmp / "gateway.log").open("wb")),
                    stderr=subprocess.STDOUT,
                )
            )
            gateway = f"http://127.0.0.1:{gateway_port}"
            wait_http(f"{gateway}/readyz", processes[-1], timeout=60)
            while httpx2.get(f"{gateway}/v1/servers/echo", timeout=5).json().get("state") != "ready":
                time.sleep(0.1)
            yield Federation(upstream, gateway, processes[-1].pid)
        finally:
            for process in reversed(processes):
                process.terminate()
                process.wait(timeout=10)


def _caller(client: Client, tool: str) -> Call:
    async def call() -> None:
        result = await client.call_tool(tool, {"text": "ping"})
        if result.is_error:
            raise SystemExit(f"{tool} answered an error: {result.content}")

    return call


async def _era(
    stack: Federation, mode: str, calls: int, rounds: int
) -> tuple[list[tuple[object, ...]], list[float]]:
    async with (
        Client(stack.upstream, mode=mode) as direct,
        Client(f"{stack.gateway}/mcp", mode=mode) as aggregate,
        Client(f"{stack.gateway}/servers/echo/mcp", mode=mode) as own,
    ):
        paths = (
            ("(a) upstream direct", _caller(direct, "echo")),
            ("(b) Colonnade /mcp", _caller(aggregate, "default__echo__echo")),
            ("(c) Colonnade /servers/echo/mcp", _caller(own, "echo")),
        )
        samples: list[list[float]] = [[] for _ in paths]
        medians: list[list[float]] = [[] for _ in paths]
        cpu: list[list[float]] = [[] for _ in paths]
        for _ in range(rounds):
            for index, (_, call) in enumerate(paths):
                before = cpu_seconds(stack.gateway_pid)
                taken = await sequential(call, calls)
                after = cpu_seconds(stack.gateway_pid)
                samples[index] += taken
                medians[index].append(statistics.median(taken))
                if before is not None and after is not None:
                    cpu[index].append((after - before) * 1000 / (calls + min(50, calls)))
        rows: list[tuple[object, ...]] = []
        for index, (label, call) in enumerate(paths):
            c8 = await throughput(call, 8, calls)
            c32 = await throughput(call, 32, calls)
            gateway_cpu = statistics.mean(cpu[index]) if cpu[index] and index else None
            rows.append(
                (
                    label,
                    statistics.median(medians[index]),
                    percentile(samples[index], 0.99),
                    c8,
                    c32,
                    gateway_cpu,
                )
            )
    added = [statistics.median([b - a for a, b in zip(medians[0], medians[i], strict=True)]) for i in (1, 2)]
    return rows, added


async def main(calls: int, rounds: int) -> None:
    console = Console(width=None if sys.stdout.isatty() else 150)
    with federation() as stack:
        for version, mode in ERAS:
            rows, added = await _era(stack, mode, calls, rounds)
            table = Table(
                title=f"{version}: {rounds} x {calls} sequential echo calls (median of the rounds' medians), "
                f"then {calls} calls at 8 and 32 callers"
            )
            for column in ("path", "median ms", "p99 ms", "calls/s @8", "calls/s @32", "gateway CPU ms/call"):
                table.add_column(column, justify="left" if column == "path" else "right")
            for label, median, p99, c8, c32, gateway_cpu in rows:
                cpu = "-" if gateway_cpu is None else f"{gateway_cpu:.3f}"
                table.add_row(str(label), f"{median:.3f}", f"{p99:.3f}", f"{c8:.0f}", f"{c32:.0f}", cpu)
            console.print(table)
            console.print(
                f"{version}: median added by the gateway (paired per round): /mcp {added[0]:.3f} ms, "
                f"/servers/echo/mcp {added[1]:.3f} ms (targets: < 1.5 ms added, <= 1.0 ms gateway CPU)\n"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="calls per measurement (default 1000)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of sequential (a), (b), (c) (default 3)"
    )
    arguments = parser.parse_args()
    if arguments.calls < 1 or arguments.rounds < 1:
        parser.error("--calls and --rounds must be at least 1")
    asyncio.run(main(arguments.calls, arguments.rounds))
