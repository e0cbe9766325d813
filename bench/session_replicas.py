"""What serving a handshake-era MCP session on a replica that did not open it costs, in process.

Three gateways in this process (`Gateway.open`, SQLite each): `a` and `b` share one Redis key
prefix (`shared_state.redis_url`), so a session opened on `a` is served by `b` from its shared
record (`surfaces/mcp/session_records.py`); `solo` has no Redis, as the embedded default. Their
ASGI apps get raw requests, no HTTP server in between. Each session is opened with `initialize`
and `notifications/initialized`, then answers `--requests` `tools/list` requests, and is ended
with a DELETE (the opening and the ending are not timed). Four kinds of request are timed:

- first request on `b` of a session `b` opened itself (the yardstick of a first request);
- first request on `b` of a session `a` opened (`b` reads the record and rebuilds the session);
- later requests on `b` of such a session;
- later requests of a session on `solo` (no records at all: the yardstick of a later request);
- and, for scale, what a client that had to open a new session instead would pay on `b`: its
  `initialize` and `notifications/initialized` together (one figure per session);
- and what the alternative design, forwarding each request to the session's owner, would add to
  every request that lands elsewhere: later requests of a session on `a`, once served directly,
  once sent to `a` over loopback HTTP (uvicorn in this process, an aiohttp client as a forwarder
  would use). The difference is a lower bound of the hop: a forwarder also reads the request at
  its own edge and relays the answer back.

Blocks of `--sessions` sessions take turns for `--rounds` rounds; each kind's figure is the
median over rounds of this process's CPU per request (every thread) and of the wall time per
request (the Redis round trip is wall time, not this process's CPU). The extra cost of a first
request on a new replica is its figure minus the first yardstick; the extra cost of later
requests is theirs minus the later yardstick (it should be about 0: a request of a held session
only renews its record now and then, off the request's path).

Run: .venv/bin/python bench/session_replicas.py [--sessions 100] [--requests 5] [--rounds 7]
     [--redis redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import uvicorn
from starlette.applications import Starlette

from colonnade.config import Settings, SharedStateSettings
from colonnade.observability.logging import configure_logging
from colonnade.runtime.gateway import Gateway

_HOST = b"127.0.0.1:8765"
_JSON = [
    (b"host", _HOST),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]
_VERSION = b"2025-11-25"
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
Forward = Callable[[str], Awaitable[None]]
KINDS = (
    "initialize + initialized",
    "first, opened here",
    "first, opened on another replica",
    "later, records on",
    "later, no Redis",
    "later, direct on the owner",
    "later, forwarded to the owner",
)


async def _asgi(
    app: Starlette, method: str, body: Any, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[bytes, bytes]]:
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
    answer: dict[str, Any] = {}

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

    await app(scope, receive, send)
    return answer["status"], answer["headers"]


def _in_session(session: str) -> list[tuple[bytes, bytes]]:
    return [*_JSON, (b"mcp-protocol-version", _VERSION), (b"mcp-session-id", session.encode())]


async def _open(app: Starlette) -> str:
    status, headers = await _asgi(app, "POST", _INITIALIZE, _JSON)
    if status != 200:
        raise SystemExit(f"initialize answered {status}")
    session = headers[b"mcp-session-id"].decode()
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await _asgi(app, "POST", ready, _in_session(session))
    return session


async def _request(app: Starlette, session: str) -> None:
    status, _ = await _asgi(app, "POST", _LIST, _in_session(session))
    if status != 200:
        raise SystemExit(f"tools/list of session {session} answered {status}")


async def _end(app: Starlette, session: str) -> None:
    await _asgi(app, "DELETE", None, _in_session(session))


@contextlib.asynccontextmanager
async def _gateway(tmp: Path, name: str, redis: str | None, prefix: str) -> AsyncIterator[Starlette]:
    shared = SharedStateSettings(redis_url=redis, key_prefix=prefix, replica_id=name)
    gateway = await Gateway.open(Settings(data_dir=tmp / name, shared_state=shared, manifests_dir=None))
    try:
        app = gateway.http_app()
        async with app.router.lifespan_context(app):
            yield app
    finally:
        await gateway.aclose()


async def _round(
    a: Starlette, b: Starlette, solo: Starlette, forward: Forward, sessions: int, requests: int
) -> dict[str, tuple[float, float]]:
    """CPU and wall seconds per request of each kind, over one block of sessions each."""
    totals: dict[str, list[float]] = {kind: [0.0, 0.0, 0] for kind in KINDS}

    async def timed(kind: str, app: Starlette, session: str, count: int) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(count):
            await _request(app, session)
        total = totals[kind]
        total[0] += time.process_time() - cpu
        total[1] += time.perf_counter() - wall
        total[2] += count

    for _ in range(sessions):
        cpu, wall = time.process_time(), time.perf_counter()
        here = await _open(b)
        opening = totals["initialize + initialized"]
        opening[0] += time.process_time() - cpu
        opening[1] += time.perf_counter() - wall
        opening[2] += 1
        await timed("first, opened here", b, here, 1)
        await _end(b, here)
        elsewhere = await _open(a)
        await timed("first, opened on another replica", b, elsewhere, 1)
        await timed("later, records on", b, elsewhere, requests - 1)
        await _end(b, elsewhere)
        alone = await _open(solo)
        await _request(solo, alone)
        await timed("later, no Redis", solo, alone, requests - 1)
        await _end(solo, alone)
        owned = await _open(a)
        await _request(a, owned)
        await timed("later, direct on the owner", a, owned, requests - 1)
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(requests - 1):
            await forward(owned)
        hop = totals["later, forwarded to the owner"]
        hop[0] += time.process_time() - cpu
        hop[1] += time.perf_counter() - wall
        hop[2] += requests - 1
        await _end(a, owned)
    return {kind: (cpu / n, wall / n) for kind, (cpu, wall, n) in totals.items()}


@contextlib.asynccontextmanager
async def _forwarder(app: Starlette) -> AsyncIterator[Forward]:
    """`app` on loopback HTTP (uvicorn in this loop) and a pooled aiohttp client sending to it."""
    # IPPROTO_TCP, as a server makes it: asyncio sets TCP_NODELAY only then (else 40 ms delayed ACKs)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # noqa: ASYNC110 (uvicorn tells only by this flag)
        await asyncio.sleep(0.01)
    body = json.dumps(_LIST).encode()
    try:
        async with aiohttp.ClientSession() as client:

            async def forward(session: str) -> None:
                headers = {
                    key.decode(): value.decode() for key, value in _in_session(session) if key != b"host"
                }
                async with client.post(url, data=body, headers=headers) as answer:
                    await answer.read()
                    if answer.status != 200:
                        raise SystemExit(f"the forwarded tools/list answered {answer.status}")

            yield forward
    finally:
        server.should_exit = True
        await serving
        sock.close()


async def measure(tmp: Path, redis: str, sessions: int, requests: int, rounds: int) -> None:
    prefix = f"bench-sessions-{uuid.uuid4().hex[:8]}"
    with (tmp / "gateway.log").open("w") as log:
        configure_logging("info", stream=log)
        async with (
            _gateway(tmp, "a", redis, prefix) as a,
            _gateway(tmp, "b", redis, prefix) as b,
            _gateway(tmp, "solo", None, prefix) as solo,
            _forwarder(a) as forward,
        ):
            await _round(a, b, solo, forward, 20, requests)  # warm-up
            per_round = [await _round(a, b, solo, forward, sessions, requests) for _ in range(rounds)]
    cpu = {kind: statistics.median(r[kind][0] for r in per_round) * 1e6 for kind in KINDS}
    wall = {kind: statistics.median(r[kind][1] for r in per_round) * 1e6 for kind in KINDS}
    print(f"{rounds} rounds x {sessions} sessions x {requests} requests; us per request, median over rounds")
    print(f"{'request':36} {'CPU us':>9} {'wall us':>9}")
    for kind in KINDS:
        print(f"{kind:36} {cpu[kind]:9.0f} {wall[kind]:9.0f}")
    first_cpu = cpu["first, opened on another replica"] - cpu["first, opened here"]
    first_wall = wall["first, opened on another replica"] - wall["first, opened here"]
    later_cpu = cpu["later, records on"] - cpu["later, no Redis"]
    later_wall = wall["later, records on"] - wall["later, no Redis"]
    print(
        f"extra cost of the first request on a new replica: {first_cpu:.0f} us CPU, {first_wall:.0f} us wall"
    )
    print(
        f"extra cost of a later request with shared records: {later_cpu:.0f} us CPU, {later_wall:.0f} us wall"
    )
    hop_cpu = cpu["later, forwarded to the owner"] - cpu["later, direct on the owner"]
    hop_wall = wall["later, forwarded to the owner"] - wall["later, direct on the owner"]
    print(
        f"owner forwarding instead: at least {hop_cpu:.0f} us CPU, {hop_wall:.0f} us wall on every request "
        "that lands elsewhere"
    )


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--sessions", type=int, default=100, help="sessions of each kind per round")
    parser.add_argument("--requests", type=int, default=5, help="requests per session (at least 2)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="the Redis the replicas share")
    args = parser.parse_args()
    if args.requests < 2:
        parser.error("--requests must be at least 2: a first request and a later one")
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(Path(tmp), args.redis, args.sessions, args.requests, args.rounds))


if __name__ == "__main__":
    main()
