"""How many slow or silent clients does the gateway keep holding, and does it still serve meanwhile?

Opens N connections of each kind against a gateway and watches them for T seconds:
  idle      connects and never sends a byte
  slowloris sends a request line, then one header line every --drip seconds, never ending the headers
  body      sends complete headers announcing a 1000-byte body, 10 bytes of it, then nothing
A connection counts as released once the gateway closes it (EOF or reset). Meanwhile a fresh
client asks GET /healthz every second; the table shows how many of those answered and how slowly.

Without --url the script starts the demo backend and a gateway of this checkout itself.

Run: .venv/bin/python bench/slow_clients.py [--url http://127.0.0.1:8765] [--n 300] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import demo_stack

KINDS = ("idle", "slowloris", "body")


@dataclass
class Watch:
    """What happened to the connections of one kind."""

    kind: str
    opened: int = 0
    refused: int = 0
    closed_after_s: list[float] = field(default_factory=list)
    first_bytes: dict[str, int] = field(default_factory=dict)

    def held(self) -> int:
        return self.opened - len(self.closed_after_s)


async def _hold(kind: str, host: str, port: int, watch: Watch, drip_s: float, stop: asyncio.Event) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        watch.refused += 1
        return
    watch.opened += 1
    started = time.monotonic()
    if kind == "slowloris":
        writer.write(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
    elif kind == "body":
        writer.write(
            f"POST /v1/calls HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 1000\r\n\r\n".encode()
            + b'{"tool_id"'
        )
    drip = asyncio.create_task(_drip(writer, drip_s)) if kind == "slowloris" else None
    reading = asyncio.create_task(_read_until_closed(reader))
    stopping = asyncio.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if reading in done:
            watch.closed_after_s.append(time.monotonic() - started)
            line = reading.result().split(b"\r\n", 1)[0].decode(errors="replace") or "(closed, no answer)"
            watch.first_bytes[line] = watch.first_bytes.get(line, 0) + 1
    finally:
        for task in (drip, reading, stopping):
            if task is not None:
                task.cancel()
        writer.close()


async def _drip(writer: asyncio.StreamWriter, every_s: float) -> None:
    with contextlib.suppress(OSError):
        for i in range(10**6):
            await asyncio.sleep(every_s)
            writer.write(f"X-Drip-{i}: x\r\n".encode())
            await writer.drain()


async def _read_until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the gateway sends until it closes the connection."""
    received = b""
    with contextlib.suppress(OSError):
        while chunk := await reader.read(65536):
            received += chunk
    return received


async def _probe(url: str, stop: asyncio.Event, latencies: list[float | None]) -> None:
    """A well-behaved client: one GET /healthz a second on a new connection."""
    while not stop.is_set():
        started = time.monotonic()
        try:
            async with httpx2.AsyncClient(timeout=5.0) as client:
                response = await client.get(f"{url}/healthz")
            latencies.append((time.monotonic() - started) * 1000 if response.status_code == 200 else None)
        except httpx2.HTTPError:
            latencies.append(None)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)


async def attack(url: str, n: int, seconds: float, drip_s: float) -> tuple[list[Watch], list[float | None]]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    stop = asyncio.Event()
    watches = [Watch(kind) for kind in KINDS]
    latencies: list[float | None] = []
    holders = [
        asyncio.create_task(_hold(watch.kind, host, port, watch, drip_s, stop))
        for _ in range(n)
        for watch in watches
    ]
    probe = asyncio.create_task(_probe(url, stop, latencies))
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*holders, probe)
    return watches, latencies


def _report(console: Console, watches: list[Watch], latencies: list[float | None], seconds: float) -> None:
    table = Table(title=f"slow clients: what the gateway still holds after {seconds:.0f} s")
    for column in ("kind", "opened", "refused", "released", "median s to release", "still held", "answer"):
        table.add_column(column, justify="left" if column in ("kind", "answer") else "right")
    for watch in watches:
        closed = watch.closed_after_s
        median = f"{statistics.median(closed):.1f}" if closed else "-"
        answers = ", ".join(f"{line} x{count}" for line, count in sorted(watch.first_bytes.items())) or "-"
        table.add_row(
            watch.kind,
            str(watch.opened),
            str(watch.refused),
            str(len(closed)),
            median,
            str(watch.held()),
            answers,
        )
    console.print(table)
    answered = [ms for ms in latencies if ms is not None]
    slowest = f", slowest {max(answered):.1f} ms" if answered else ""
    console.print(f"GET /healthz meanwhile: {len(answered)}/{len(latencies)} answered{slowest}")
    console.print(f"still held in total: {sum(w.held() for w in watches)}")


@contextlib.contextmanager
def _gateway(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url.rstrip("/")
        return
    with demo_stack() as stack:
        yield stack.mcp_url.removesuffix("/mcp")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running gateway (default: start one)")
    parser.add_argument("--n", type=int, default=300, help="connections of each kind (default 300)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long to watch (default 30)")
    parser.add_argument("--drip", type=float, default=1.0, help="seconds between slowloris header lines")
    args = parser.parse_args()
    if args.n < 1 or args.seconds <= 0 or args.drip <= 0:
        parser.error("--n, --seconds and --drip must be positive")
    console = Console(width=None if sys.stdout.isatty() else 160)
    with _gateway(args.url) as url:
        watches, latencies = asyncio.run(attack(url, args.n, args.seconds, args.drip))
    _report(console, watches, latencies, args.seconds)


if __name__ == "__main__":
    main()
