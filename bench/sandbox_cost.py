"""What the sandbox adds to a stdio server: start-up (process start to a listed session) and per call.

Runs `tests/support/hostile_server.py` (its `echo` tool) plain and sandboxed, `--starts` times each,
then `--calls` sequential calls on one session; prints medians. Needs a root gateway with cgroups for
the full sandbox (otherwise it measures what this host can apply).

Also what a pinned command adds to each start (`pin_command`: hashing the interpreter and the
server's script, and the ledger's check), and what `network: allow` adds to each connection the
server opens to an allowed port of the host (the forwarder), against the same connection made with
`network: host`, both sandboxed, and to the sandbox's start (the forwarder's fork).

    .venv/bin/python bench/sandbox_cost.py --starts 5 --calls 300
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from colonnade.adapters.command_digest import command_digests
from colonnade.adapters.mcp.upstream import CommandGate, Upstream, UpstreamState
from colonnade.adapters.sandbox.confinement import launcher_prefix, plan, resolved_path
from colonnade.config import McpServerSettings
from colonnade.mcp_relay.relay import Relay
from colonnade.runtime.tool_admission import ToolAdmission

_SERVER = Path(__file__).resolve().parents[1] / "tests" / "support" / "hostile_server.py"


def _settings(sandboxed: bool, **extra: Any) -> McpServerSettings:
    sandbox = {"enabled": sandboxed, "enforce": "warn", **extra.pop("sandbox", {})}
    return McpServerSettings.model_validate(
        {
            "name": "bench",
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(_SERVER)],
            "sandbox": sandbox,
            **extra,
        }
    )


async def _ready(upstream: Upstream) -> None:
    while upstream.state is not UpstreamState.READY:
        if upstream.last_error:
            raise RuntimeError(upstream.last_error)
        await asyncio.sleep(0.002)


async def _measure(
    sandboxed: bool, starts: int, calls: int, gate: CommandGate | None = None
) -> tuple[float, float]:
    start_ms: list[float] = []
    call_ms: list[float] = []
    for attempt in range(starts):
        upstream = Upstream(_settings(sandboxed), command_gate=gate)
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


def _pin_gate(folder: Path) -> tuple[CommandGate, McpServerSettings]:
    """The gate the runtime's `Servers` gives each stdio server with `pin_command`, on its own ledger."""
    admission = ToolAdmission(folder)
    pinned = _settings(False, pin_command={"files": [str(_SERVER)]})

    async def gate(settings: McpServerSettings) -> str | None:
        digests = await asyncio.to_thread(command_digests, pinned)
        return admission.check_command(pinned, digests)

    return gate, pinned


async def _gate_ms(gate: CommandGate, settings: McpServerSettings, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        assert await gate(settings) is None
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


class _Echo:
    """A TCP service on the host's loopback: each connection's bytes back, once its sender is done."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            connection, _ = self.listener.accept()
            with connection:
                data = b""
                while chunk := connection.recv(65536):
                    data += chunk
                connection.sendall(data)


async def _connections(network: str, echo: _Echo, starts: int, calls: int) -> tuple[float, float]:
    """Start-up and one connect-send-reply call of the sandboxed server, with `network` host or allow."""
    extra = {"network": network, "net_allowlist": [f"127.0.0.1:{echo.port}"] if network == "allow" else []}
    start_ms: list[float] = []
    call_ms: list[float] = []
    for attempt in range(starts):
        upstream = Upstream(_settings(True, sandbox=extra))
        began = time.perf_counter()
        upstream.start()
        await _ready(upstream)
        start_ms.append((time.perf_counter() - began) * 1000)
        if attempt == starts - 1:
            relay = Relay()
            for _ in range(calls):
                began = time.perf_counter()
                answer = await upstream.call_tool(
                    "connect", {"port": echo.port, "send": "x" * 512}, relay=relay, timeout_s=10
                )
                assert answer["structuredContent"]["reply"] == "x" * 512, answer
                call_ms.append((time.perf_counter() - began) * 1000)
        await upstream.stop()
    return statistics.median(start_ms), statistics.median(call_ms)


_CLIENT = """
import socket, statistics, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
times = []
for _ in range(count):
    began = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"x" * 512)
        connection.shutdown(socket.SHUT_WR)
        while connection.recv(65536):
            pass
    times.append((time.perf_counter() - began) * 1000)
print(statistics.median(times))
"""


def _inside_ms(network: str, echo: _Echo, count: int) -> float:
    """Median connect + 512 B echo timed by a client inside the sandbox (no MCP call around it)."""
    extra = {"network": network, "net_allowlist": [f"127.0.0.1:{echo.port}"] if network == "allow" else []}
    settings = _settings(True, sandbox=extra)
    confinement = plan(settings)
    spec = {
        **confinement.spec,
        "command": sys.executable,
        "path": resolved_path(settings),
        "cgroups": [],
        "memory_events": None,
        "memory_failcnt": None,
        "pids_events": None,
    }
    argv = [
        *launcher_prefix(),
        json.dumps(spec),
        "--",
        sys.executable,
        "-c",
        _CLIENT,
        str(echo.port),
        str(count),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True)
    return float(done.stdout.strip())


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
    with tempfile.TemporaryDirectory() as folder:
        gate, pinned = _pin_gate(Path(folder))
        checked = await _gate_ms(gate, pinned, max(args.starts, 20))
        gated = await _measure(False, args.starts, 1, gate)
    print(
        f"pin_command check (interpreter + script hashed, ledger compared), median of {max(args.starts, 20)}:"
        f" {checked:.2f} ms; start-up to ready with it {gated[0]:.1f} ms (plain {plain[0]:.1f} ms)"
    )
    echo = _Echo()
    host = await _connections("host", echo, args.starts, args.calls)
    allow = await _connections("allow", echo, args.starts, args.calls)
    print(
        f"connect + 512 B echo from the sandbox, median of {args.calls}: network host {host[1]:.3f} ms,"
        f" network allow (forwarder) {allow[1]:.3f} ms, added {allow[1] - host[1]:.3f} ms per connection"
    )
    direct = [_inside_ms("host", echo, args.calls), _inside_ms("allow", echo, args.calls)]
    print(
        f"the same timed inside the sandbox, median of {args.calls}: network host {direct[0]:.3f} ms,"
        f" network allow {direct[1]:.3f} ms, added {direct[1] - direct[0]:.3f} ms per connection"
    )
    print(
        f"sandboxed start-up to ready, median of {args.starts}: network host {host[0]:.1f} ms,"
        f" network allow {allow[0]:.1f} ms, added {allow[0] - host[0]:.1f} ms"
    )


if __name__ == "__main__":
    asyncio.run(main())
