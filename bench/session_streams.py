"""What answering MCP sessions over SSE costs (`server.mcp_session_streams`), per handshake-era call.

Two demo gateways, one with session streams (the default: the gateway can ask a 2025-11-25 client
during a call) and one answering each session request with one JSON body, are called in turn by
the official `mcp` client in its handshake-era mode (2025-11-25, one session each, declaring
elicitation, as a client that can confirm a call does), round after round, so both see the same
machine. Prints the median latency and the gateway's CPU per call.

Run: .venv/bin/python bench/session_streams.py [--calls 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
from pathlib import Path

import mcp_types as types
from mcp import Client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import cpu_seconds, demo_stack, sequential

TOOL = "acme__crm__get_customer"
ARGS = {"customer_id": "C-1001"}
VARIANTS = {"SSE (default)": "true", "one JSON body": "false"}


async def _decline(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Declares elicitation; the read tool measured never asks."""
    return types.ElicitResult(action="decline")


async def main(calls: int, rounds: int) -> None:
    with contextlib.ExitStack() as stacks:
        stack = {
            label: stacks.enter_context(demo_stack({"COLONNADE_SERVER__MCP_SESSION_STREAMS": value}))
            for label, value in VARIANTS.items()
        }
        async with contextlib.AsyncExitStack() as clients:
            client = {
                label: await clients.enter_async_context(
                    Client(s.mcp_url, mode="legacy", elicitation_callback=_decline)  # type: ignore[arg-type]
                )
                for label, s in stack.items()
            }
            medians: dict[str, list[float]] = {label: [] for label in VARIANTS}
            cpu: dict[str, list[float]] = {label: [] for label in VARIANTS}
            for _ in range(rounds):
                for label in VARIANTS:

                    async def call(label: str = label) -> None:
                        result = await client[label].call_tool(TOOL, ARGS)
                        if result.is_error:
                            raise SystemExit(f"{label}: the gateway answered an error: {result.content}")

                    before = cpu_seconds(stack[label].gateway_pid)
                    taken = await sequential(call, calls)
                    after = cpu_seconds(stack[label].gateway_pid)
                    medians[label].append(statistics.median(taken))
                    if before is not None and after is not None:
                        # `sequential` warms up with min(50, calls) calls first: counted in the CPU reading
                        cpu[label].append((after - before) * 1000 / (calls + min(50, calls)))
    table = Table(title=f"handshake-era tools/call through the gateway, {rounds} x {calls} calls")
    for column in ("answers", "median ms", "gateway CPU ms/call"):
        table.add_column(column, justify="left" if column == "answers" else "right")
    for label in VARIANTS:
        median = statistics.median(medians[label])
        used = f"{statistics.median(cpu[label]):.3f}" if cpu[label] else "n/a"
        table.add_row(label, f"{median:.3f}", used)
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.rounds))
