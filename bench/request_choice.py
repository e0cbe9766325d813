"""What the per-request JSON-or-SSE choice costs a plain request on `/mcp`, in process.

`/mcp` answers a plain request with one JSON body and streams one that asked for progress or log
messages (`surfaces/mcp/request_streams.py`); a 2026-07-28 tool call answered with JSON is also
registered with the leave watch (its client closing the stream cancels it). This times, against a
trivial ASGI app that only reads the body, the extra CPU of `BoundedSessionManager._answer_as`,
`answering()` and (2026-07-28 tool call) `LeaveWatch.serve`, for a plain `tools/call` of each era.

Run: .venv/bin/python bench/request_choice.py [--requests 30000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from mcp.server.lowlevel.server import Server

from colonnade.surfaces.edge import REQUEST_BODY_KEY
from colonnade.surfaces.mcp.request_streams import LeaveWatch, answering
from colonnade.surfaces.mcp.sessions import BoundedSessionManager, SessionLedger

BODY = (
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"default__echo__echo",'
    b'"arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"mcp","version":"2.3.0"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"default__echo__echo"),
    (b"user-agent", b"python-httpx/0"),
    (b"content-length", str(len(BODY)).encode()),
]
ERAS = {
    "2026-07-28 tools/call": [*HEADERS, (b"mcp-protocol-version", b"2026-07-28")],
    "2025-11-25 tools/call (session)": [
        *HEADERS,
        (b"mcp-protocol-version", b"2025-11-25"),
        (b"mcp-session-id", b"abc"),
    ],
}


async def app(scope: Any, receive: Any, send: Any) -> None:
    await receive()


async def main(requests: int, rounds: int) -> None:
    manager = BoundedSessionManager(Server("bench"), SessionLedger(), json_response=True)
    leaving = LeaveWatch()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": BODY, "more_body": False}

    async def send(message: Any) -> None:
        return None

    for label, headers in ERAS.items():
        scope = {"type": "http", "method": "POST", "headers": headers, "state": {REQUEST_BODY_KEY: BODY}}
        added: list[float] = []
        for _ in range(rounds):
            started = time.process_time()
            for _ in range(requests):
                await app(scope, receive, send)
            bare = time.process_time() - started
            started = time.process_time()
            for _ in range(requests):
                choice, watched = manager._answer_as(scope)
                with answering(choice):
                    if watched:
                        await leaving.serve(app, scope, receive, send)
                    else:
                        await app(scope, receive, send)
            added.append((time.process_time() - started - bare) / requests * 1e6)
        shown = ", ".join(f"{value:.1f}" for value in added)
        print(f"{label}: +{min(added):.1f} us CPU per request (rounds: {shown})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.requests, options.rounds))
