"""What a handshake-era session costs a proxied `tools/call` on `/mcp`, plain calls on and off, in process.

Two gateways in this process (`Gateway.open`, the full pipeline, SQLite), one with
`server.mcp_plain_calls` on and one with it off, both with the echo upstream of
`bench/federation_overhead.py` as their only server (its own process, so its CPU is not counted).
Their ASGI apps get raw requests, no HTTP server in between: a 2025-11-25 `tools/call` in one
initialized session per gateway, and a 2026-07-28 `tools/call` (no session) as the yardstick.
Blocks of `--calls` calls take turns, variant by variant in alternating order, for `--rounds`
rounds; each block's CPU is this process's (every thread), so the machine's other load reaches
every variant alike. Since issue 26 a handshake-era session's calls take the SDK's session whatever
the switch (the session fast path was removed, `docs/sdk-seams.md`), so its two rows read alike, and
what differs from the 2026-07-28 row is what the SDK's session machinery costs a call. The Python
frames each path runs per call (entered or resumed, counted with `sys.setprofile` over 200 calls
before the timing) tell the same without the machine's noise.

Run: .venv/bin/python bench/session_calls.py [--calls 200] [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from itertools import count
from pathlib import Path
from typing import Any

from starlette.applications import Starlette

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import echo_upstream

from colonnade.config import McpServerSettings, ServerSettings, Settings
from colonnade.observability.logging import configure_logging
from colonnade.runtime.gateway import Gateway

TOOL = "default__echo__echo"
_HOST = b"127.0.0.1:8765"
_JSON = [
    (b"host", _HOST),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]
_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


async def _asgi(
    app: Starlette, method: str, body: Any, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One request to the app; its status, headers and body."""
    content = json.dumps(body).encode() if body is not None else b""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [*headers, (b"content-length", str(len(content)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    delivered = False
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": content, "more_body": False}
        await asyncio.Future()  # the client never leaves
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"], answer["headers"] = message["status"], dict(message["headers"])
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["headers"], answer["body"]


@contextlib.asynccontextmanager
async def _gateway(tmp: Path, upstream: str, plain: bool) -> AsyncIterator[Starlette]:
    settings = Settings(
        data_dir=tmp / ("on" if plain else "off"),
        servers=[McpServerSettings(name="echo", transport="http", url=upstream)],
        server=ServerSettings(mcp_plain_calls=plain),
    )
    gateway = await Gateway.open(settings)
    try:
        app = gateway.http_app()
        async with app.router.lifespan_context(app):
            for _ in range(300):  # the upstream's tools reach the catalog
                if gateway.catalog.get(TOOL) is not None:
                    break
                await asyncio.sleep(0.1)
            yield app
    finally:
        await gateway.aclose()


class _Path:
    """One way of calling the echo tool on one gateway."""

    def __init__(self, app: Starlette, session: str | None) -> None:
        self.app, self.session, self.ids = app, session, count(1)

    async def call(self) -> None:
        rid = next(self.ids)
        if self.session is None:
            params = {"name": TOOL, "arguments": {"text": "ping"}, "_meta": _MODERN_META}
            headers = [
                *_JSON,
                (b"mcp-protocol-version", b"2026-07-28"),
                (b"mcp-method", b"tools/call"),
                (b"mcp-name", TOOL.encode()),
            ]
        else:
            params = {"name": TOOL, "arguments": {"text": "ping"}}
            headers = [
                *_JSON,
                (b"mcp-protocol-version", b"2025-11-25"),
                (b"mcp-session-id", self.session.encode()),
            ]
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
        status, _, content = await _asgi(self.app, "POST", body, headers)
        if status != 200 or b'"isError":true' in content or b'"result"' not in content:
            raise SystemExit(f"the gateway answered an error: {status} {content[:300]!r}")


async def _frames_per_call(path: _Path, calls: int) -> float:
    """Python frames entered or resumed per call in this thread: the work, without the machine's noise."""
    frames = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal frames
        if event == "call":
            frames += 1

    sys.setprofile(profile)
    try:
        for _ in range(calls):
            await path.call()
    finally:
        sys.setprofile(None)
    return frames / calls


async def _open_session(app: Starlette) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    _, headers, _ = await _asgi(app, "POST", initialize, _JSON)
    session = headers[b"mcp-session-id"].decode()
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await _asgi(
        app,
        "POST",
        ready,
        [*_JSON, (b"mcp-protocol-version", b"2025-11-25"), (b"mcp-session-id", session.encode())],
    )
    return session


async def measure(upstream: str, tmp: Path, calls: int, rounds: int) -> None:
    with (tmp / "gateway.log").open("w") as log:
        configure_logging("info", stream=log)  # a call's log line is part of its cost, as in production
        async with _gateway(tmp, upstream, True) as on, _gateway(tmp, upstream, False) as off:
            paths = {
                "2025-11-25 session, plain calls on": _Path(on, await _open_session(on)),
                "2025-11-25 session, plain calls off": _Path(off, await _open_session(off)),
                "2026-07-28, plain calls on": _Path(on, None),
            }
            for path in paths.values():
                for _ in range(100):  # warm-up
                    await path.call()
            frames = {label: await _frames_per_call(path, 200) for label, path in paths.items()}
            cpu: dict[str, list[float]] = {label: [] for label in paths}
            wall: dict[str, list[float]] = {label: [] for label in paths}
            labels = list(paths)
            for turn in range(rounds):
                for label in labels if turn % 2 == 0 else labels[::-1]:
                    start_cpu, start_wall = time.process_time(), time.perf_counter()
                    for _ in range(calls):
                        await paths[label].call()
                    cpu[label].append((time.process_time() - start_cpu) * 1000 / calls)
                    wall[label].append((time.perf_counter() - start_wall) * 1000 / calls)
    print(f"{rounds} rounds x {calls} calls per path, ms per call in this process: median, best block")
    for label in labels:
        print(
            f"{label:38} CPU {statistics.median(cpu[label]):.3f}, {min(cpu[label]):.3f}"
            f"  wall {statistics.median(wall[label]):.3f}, {min(wall[label]):.3f}"
        )
    for label in labels:
        print(f"{label:38} Python frames run per call: {frames[label]:.0f}")
    for pick in (statistics.median, min):
        saved = pick(cpu[labels[1]]) - pick(cpu[labels[0]])
        share = saved / pick(cpu[labels[1]])
        print(f"plain calls save a handshake-era call {saved:.3f} ms of CPU ({share:.0%}; {pick.__name__})")


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--calls", type=int, default=200, help="calls per block (default 200)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds of blocks (default 15)")
    arguments = parser.parse_args()
    with echo_upstream() as upstream, tempfile.TemporaryDirectory(prefix="colonnade-bench-") as name:
        asyncio.run(measure(upstream, Path(name), arguments.calls, arguments.rounds))


if __name__ == "__main__":
    main()
