"""What the sandbox adds to a stdio server: start-up (process start to a listed session) and per call.

Runs `tests/support/hostile_server.py` (its `echo` tool) plain and sandboxed, `--starts` times each,
then `--calls` sequential calls on one session; prints medians. Needs a root gateway with cgroups for
the full sandbox (otherwise it measures what this host can apply).

    .venv/bin/python bench/sandbox_cost.py --starts 5 --calls 300
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from colonnade.adapters.mcp.upstream import Upstream, UpstreamState
from colonnade.config import McpServerSettings
from colonnade.mcp_relay.relay import Relay

_SERVER = Path(__file__).resolve().parents[1] / "tests" / "support" / "hostile_server.py"


def _settings(sandboxed: bool) -> McpServerSettings:
    return McpServerSettings.model_validate(
        {
            "name": "bench",
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(_SERVER)],
            "sandbox": {"enabled": sandboxed, "enforce": "warn"},
        }
    )


async def _ready(upstream: Upstream) -> None:
    while upstream.state is not UpstreamState.READY:
        if upstream.last_error:
            raise RuntimeError(upstream.last_error)
        await asyncio.sleep(0.002)


async def _measure(sandboxed: bool, starts: int, calls: int) -> tuple[float, float]:
    start_ms: list[float] = []
    call_ms: list[float] = []
    for attempt in range(starts):
        upstream = Upstream(_settings(sandboxed))
        began = time.perf_counter()
        upstream.start()
        await _ready(upstream)
        start_ms.append((time.perf_counter() - began) * 1000)
        if attempt == starts - 1:
            relay = Relay()
            for _ in range(calls):
                began = time.perf_counter()
                await upstream.call_tool("echo", {"n": 1}, relay=relay, timeout_s=10)
                call_ms.append((time.perf_counter() - began) * 1000)
        await upstream.stop()
    return statistics.median(start_ms), statistics.median(call_ms)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    plain = await _measure(False, args.starts, args.calls)
    boxed = await _measure(True, args.starts, args.calls)
    print(
        f"start-up to ready, median of {args.starts}: plain {plain[0]:.1f} ms, sandboxed {boxed[0]:.1f} ms,"
        f" added {boxed[0] - plain[0]:.1f} ms"
    )
    print(
        f"tools/call, median of {args.calls}: plain {plain[1]:.3f} ms, sandboxed {boxed[1]:.3f} ms,"
        f" added {boxed[1] - plain[1]:.3f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
