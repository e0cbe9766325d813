"""What one HTTP request costs the process that sends it, by client stack.

The gateway's adapter calls backends with a pooled aiohttp `ClientSession` per backend origin
(DESIGN §4). This measures, against the demo backend on loopback, the per-request wall time and
the sender's own CPU time of:

- `HttpAdapter.execute` end to end: request built from a binding, sent on the origin's session,
  body read under the size cap, JSON parsed, outcome classified;
- `aiohttp.ClientSession` as the adapter configures it (`adapters/http/session.py`), request sent
  and body read to the end;
- `httpx2.AsyncClient` on httpx2's default transport (httpcore2 + h11), used as the adapter used
  it before aiohttp (build_request, streamed send, read to the end);
- `httpcore2.AsyncConnectionPool`, httpx2's default transport, called directly;
- a bare keep-alive connection: asyncio's transport plus the `httptools` response parser (what
  uvicorn parses requests with), the floor for a Python sender on this event loop.

The gap between the adapter's row and the last is the part of a gateway call's overhead that
belongs to the HTTP client (`bench/call_overhead.py` reports the gateway's CPU per call).

Run: .venv/bin/python bench/http_client_floor.py [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import httpcore2
import httptools
import httpx2
import uvloop
from rich.console import Console
from rich.table import Table

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http.session import new_session
from colonnade.catalog.http_binding import HttpBinding

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT, _wait, free_port

PATH = "/customers/C-1001"
Send = Callable[[], Awaitable[None]]


class _BareConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: write a request, resolve when the response is complete."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self._body: list[bytes] = []
        self._done: asyncio.Future[bytes] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are duck-typed

    def data_received(self, data: bytes) -> None:
        self._parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(b"".join(self._body))
        self._body = []

    async def request(self, raw: bytes) -> bytes:
        assert self.transport is not None
        self._done = asyncio.get_running_loop().create_future()
        self.transport.write(raw)
        return await self._done


def _via_aiohttp(session: aiohttp.ClientSession, url: str) -> Send:
    """One request as the adapter sends it: no redirects, body read to the end, connection released."""

    async def send() -> None:
        response = await session.request("GET", url, allow_redirects=False)
        try:
            await response.read()
        finally:
            response.release()
        if response.status != 200:
            raise SystemExit("the backend did not answer 200")

    return send


def _via_adapter(adapter: HttpAdapter, base_url: str) -> Send:
    binding = HttpBinding(base_url=base_url, method="GET", path=PATH)

    async def send() -> None:
        if not (await adapter.execute(binding, {})).ok:
            raise SystemExit("the adapter's call did not succeed")

    return send


async def _measure(send: Send, n: int) -> tuple[float, float]:
    for _ in range(min(200, n)):
        await send()
    cpu, samples = time.process_time(), []
    for _ in range(n):
        started = time.perf_counter()
        await send()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), (time.process_time() - cpu) * 1000 / n


def _via(client: httpx2.AsyncClient, url: str) -> Send:
    """One request as the adapter sends it: built, streamed, read to the end, closed."""

    async def send() -> None:
        response = await client.send(client.build_request("GET", url), stream=True)
        try:
            async for _ in response.aiter_bytes():
                pass
        finally:
            await response.aclose()
        response.raise_for_status()

    return send


async def _run(port: int, n: int) -> list[tuple[str, float, float]]:
    base_url = f"http://127.0.0.1:{port}"
    url = base_url + PATH
    rows = []
    async with HttpAdapter() as adapter:
        adapter_cost = await _measure(_via_adapter(adapter, base_url), n)
        rows.append(("HttpAdapter.execute (aiohttp, end to end)", *adapter_cost))
    async with new_session(max_connections=100, keepalive_s=30.0, trust_env=False, user_agent="b") as session:
        session_cost = await _measure(_via_aiohttp(session, url), n)
        rows.append(("aiohttp.ClientSession (as the adapter's)", *session_cost))
    async with httpx2.AsyncClient() as client:
        rows.append(("httpx2.AsyncClient (httpcore2 transport)", *await _measure(_via(client, url), n)))
    async with httpcore2.AsyncConnectionPool() as pool:

        async def via_httpcore() -> None:
            if (await pool.request("GET", url)).status != 200:
                raise SystemExit("the backend did not answer 200")

        rows.append(("httpcore2.AsyncConnectionPool", *await _measure(via_httpcore, n)))
    transport, bare = await asyncio.get_running_loop().create_connection(_BareConnection, "127.0.0.1", port)
    raw = f"GET {PATH} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: */*\r\n\r\n".encode()

    async def via_bare() -> None:
        if b"C-1001" not in await bare.request(raw):
            raise SystemExit("the backend's answer lacks the customer")

    rows.append(("asyncio + httptools (floor)", *await _measure(via_bare, n)))
    transport.close()
    return rows


def main(n: int) -> None:
    console = Console(width=None if sys.stdout.isatty() else 120)
    with tempfile.TemporaryDirectory(prefix="colonnade-bench-") as tmp:
        port = free_port()
        backend = subprocess.Popen(
            [sys.executable, "-m", "examples.demo_backend", "--port", str(port), "--db", f"{tmp}/d.db"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait(f"http://127.0.0.1:{port}/healthz", backend)
            rows = uvloop.run(_run(port, n))
        finally:
            backend.terminate()
            backend.wait(timeout=10)
    table = Table(title=f"HTTP client cost: {n} sequential GET {PATH} on loopback (uvloop)")
    for column in ("client", "median ms", "sender CPU ms/request"):
        table.add_column(column, justify="left" if column == "client" else "right")
    for label, median, cpu in rows:
        table.add_row(label, f"{median:.3f}", f"{cpu:.3f}")
    console.print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000, help="requests per client (default 3000)")
    main(parser.parse_args().requests)
