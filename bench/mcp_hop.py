"""What one proxied `tools/call` costs the gateway's process on its way to the server and back.

In one process, without the HTTP server or the pipeline: the adapter's `Upstream.call_tool` on a
session with the echo upstream (`bench/echo_upstream.py`), through the `mcp` SDK's client session
and through the direct POST (`adapters/mcp/direct_post.py`) at 2026-07-28, and on a handshake-era
(2025-11-25) session such as the per-server endpoint's twin (always the SDK's session since issue
26: a caller listening for progress, and a quiet one); and, as the floor, the same 2026-07-28
JSON-RPC POST made with aiohttp alone. The paths take turns in `--rounds` rounds; CPU and wall time
per call are medians over the rounds.

Run: .venv/bin/python bench/mcp_hop.py [--calls 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import echo_upstream

from colonnade.adapters.mcp.upstream import Upstream
from colonnade.config import McpServerSettings
from colonnade.mcp_relay.relay import Relay

VERSION = "2026-07-28"
HANDSHAKE = "2025-11-25"


async def _cost(call: Callable[[], Awaitable[object]], calls: int) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.process_time() - cpu) * 1000 / calls, (time.perf_counter() - wall) * 1000 / calls


async def measure(url: str, calls: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """CPU and wall milliseconds per call of each path, per round."""
    upstream = Upstream(McpServerSettings(name="echo", transport="http", url=url))
    upstream.start()
    twin = Upstream(McpServerSettings(name="echo", transport="http", url=url, protocol="legacy"))
    twin.start()
    arguments = {"text": "ping"}
    sdk = Relay(wants_progress=True)  # a caller listening for progress keeps the SDK's path
    direct = Relay()
    try:
        await upstream.call_tool("echo", arguments, relay=sdk, timeout_s=30)  # waits for the session
        await twin.call_tool("echo", arguments, relay=sdk, timeout_s=30)
        assert upstream.negotiated == VERSION, upstream.negotiated
        assert twin.negotiated == HANDSHAKE, twin.negotiated
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": VERSION,
                        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                    "name": "echo",
                    "arguments": arguments,
                },
            }
        ).encode()
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": VERSION,
            "mcp-method": "tools/call",
            "mcp-name": "echo",
        }
        async with aiohttp.ClientSession() as pool:

            async def raw() -> object:
                async with pool.post(url, data=body, headers=headers) as response:
                    return json.loads(await response.read())

            paths: dict[str, Callable[[], Awaitable[object]]] = {
                "SDK client session": lambda: upstream.call_tool("echo", arguments, relay=sdk, timeout_s=9),
                "direct POST": lambda: upstream.call_tool("echo", arguments, relay=direct, timeout_s=9),
                f"{HANDSHAKE} SDK session": lambda: twin.call_tool("echo", arguments, relay=sdk, timeout_s=9),
                f"{HANDSHAKE} SDK session, quiet caller": lambda: twin.call_tool(
                    "echo", arguments, relay=direct, timeout_s=9
                ),
                "aiohttp alone (floor)": raw,
            }
            costs: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
            for call in paths.values():
                await _cost(call, min(calls, 200))  # warm-up
            for _ in range(rounds):
                for name, call in paths.items():
                    costs[name].append(await _cost(call, calls))
    finally:
        await upstream.stop()
        await twin.stop()
    return costs


def main(calls: int, rounds: int) -> None:
    with echo_upstream() as url:
        costs = uvloop.run(measure(url, calls, rounds))
    print(f"{rounds} rounds x {calls} sequential echo calls, in process (median of the rounds)")
    print(f"{'path':<28} {'CPU ms/call':>12} {'wall ms/call':>13}")
    for name, measured in costs.items():
        cpu = statistics.median(c for c, _ in measured)
        wall = statistics.median(w for _, w in measured)
        print(f"{name:<28} {cpu:>12.3f} {wall:>13.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="calls per path and round (default 1000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the paths (default 5)")
    arguments = parser.parse_args()
    if arguments.calls < 1 or arguments.rounds < 1:
        parser.error("--calls and --rounds must be at least 1")
    main(arguments.calls, arguments.rounds)
