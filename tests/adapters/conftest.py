"""A real HTTP backend on loopback for adapter tests, plus a rude one and a refused port, and a
`run` fixture that runs a scenario on asyncio and on uvloop.

The backends run with `tests.support.loopback.serve_in_thread` (uvicorn on a free loopback port
in a background thread), which every suite shares.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import uvloop
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tests.support.form_echo import form_echo
from tests.support.loopback import serve_in_thread

T = TypeVar("T")
Run = Callable[[Callable[[], Awaitable[T]]], T]


@pytest.fixture(
    params=[
        pytest.param(asyncio.new_event_loop, id="asyncio"),
        pytest.param(uvloop.new_event_loop, id="uvloop"),  # what `colonnade serve` runs on
    ]
)
def run(request: pytest.FixtureRequest) -> Run[Any]:
    """Run a test's scenario on a fresh event loop of each kind."""

    def run_on_loop(main: Callable[[], Awaitable[Any]]) -> Any:
        with asyncio.Runner(loop_factory=request.param) as runner:
            return runner.run(main())

    return run_on_loop


async def _echo(request: Request) -> Response:
    """Everything the backend received, as JSON; `client_port` tells connections apart."""
    raw = await request.body()
    return JSONResponse(
        {
            "method": request.method,
            "raw_path": request.scope["raw_path"].decode("ascii"),
            "path": request.scope["path"],
            "query": [list(pair) for pair in request.query_params.multi_items()],
            "raw_query": request.scope["query_string"].decode("ascii"),
            "headers": {k: v for k, v in request.headers.items()},
            "body": json.loads(raw) if raw else None,
            "client_port": request.client.port if request.client else None,
        }
    )


async def _respond(request: Request) -> Response:
    """`/respond/{code}?body=...&header=Name:Value`: answer exactly what the test asks for."""
    headers = dict(item.split(":", 1) for item in request.query_params.getlist("header"))
    body = request.query_params.get("body", "")
    media = headers.pop("content-type", "text/plain; charset=utf-8")
    return Response(body, status_code=int(request.path_params["code"]), headers=headers, media_type=media)


async def _slow(request: Request) -> Response:
    """Answer after `seconds`, giving up early when the client has gone."""
    until = time.monotonic() + float(request.query_params.get("seconds", "5"))
    while time.monotonic() < until:
        if await request.is_disconnected():
            return Response(status_code=499)
        await asyncio.sleep(0.02)
    return JSONResponse({"slow": True, "client_port": request.client.port if request.client else None})


async def _trickle(request: Request) -> Response:
    """A 200 whose body arrives one byte every 50 ms for `seconds`: no single read ever stalls."""
    seconds = float(request.query_params.get("seconds", "5"))

    async def drip() -> AsyncIterator[bytes]:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            yield b" "
            await asyncio.sleep(0.05)

    return StreamingResponse(drip(), media_type="text/plain")


async def _big(request: Request) -> Response:
    size = int(request.query_params["bytes"])
    if request.query_params.get("chunked") == "true":

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(size // 1024):
                yield b"x" * 1024

        return StreamingResponse(chunks(), media_type="text/plain")
    return Response(b"x" * size, media_type="text/plain")


class _Truncated:
    """Promise 100 bytes, send 10, stop: the server then drops the connection mid-answer."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"100")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"partial"', "more_body": False})


def backend_app() -> Starlette:
    every = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return Starlette(
        routes=[
            Route("/echo/{rest:path}", _echo, methods=every),
            Route("/form-echo", form_echo, methods=every),
            Route("/respond/{code:int}", _respond, methods=every),
            Route("/slow", _slow),
            Route("/trickle", _trickle),
            Route("/big", _big),
            Route("/truncated", _Truncated()),
        ]
    )


@pytest.fixture(scope="session")
def backend_url() -> Iterator[str]:
    """Base URL of the loopback backend (shared by the whole session: it keeps no state)."""
    with serve_in_thread(backend_app()) as url:
        yield url


@dataclass
class RudeServer:
    """Accepts a connection, reads the request, then resets the connection without answering."""

    url: str
    accepted: int = 0


@pytest.fixture
def rude_server() -> Iterator[RudeServer]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)
    rude = RudeServer(f"http://127.0.0.1:{listener.getsockname()[1]}")
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            rude.accepted += 1
            conn.settimeout(2)
            try:
                conn.recv(65536)
            finally:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield rude
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.fixture
def refused_url() -> str:
    """A loopback URL nobody listens on: the port was bound, then released."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"
