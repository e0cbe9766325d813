"""Can one caller's flood of MCP `initialize` calls lock other callers out, or grow the gateway's memory?

Starts the demo backend and a gateway of this checkout, then:
  1. a flooder at 127.0.0.1 sends N `initialize` requests (2025-11-25, no session id), C at a time,
     while a second caller at 127.0.0.2 keeps one session-based (2025-11-25) SDK client busy with
     tools/list and counts its answers;
  2. afterwards, a fresh session-based SDK client at 127.0.0.2 and one at 127.0.0.1 (the flooder's own
     address, so the same anonymous caller) each open a session and list the tools, timed.
The table shows the sessions the gateway holds (its /metrics), its resident memory before and after, and
how the other callers fared. `--unbounded` gives the per-caller and total bounds the SDK's old total
(10,000) to show what the bounds prevent.

Run: .venv/bin/python bench/session_flood.py [--n 10000] [--concurrency 16] [--unbounded]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import demo_stack

FLOODER, OTHER = "127.0.0.1", "127.0.0.2"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream"}


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match.group(1)) / 1024 if match else float("nan")


def client_from(address: str, timeout: float = 30.0) -> httpx2.AsyncClient:
    transport = httpx2.AsyncHTTPTransport(local_address=address)
    return httpx2.AsyncClient(transport=transport, timeout=timeout)


async def session_metrics(mcp_url: str) -> dict[str, int]:
    """The gateway's session gauges and counters from /metrics (name without `colonnade_mcp_`)."""
    async with httpx2.AsyncClient() as http:
        text = (await http.get(mcp_url.removesuffix("/mcp") + "/metrics")).text
    found = re.findall(
        r"^colonnade_mcp_(sessions|sessions_evicted_total|sessions_refused_total) (\S+)$", text, re.M
    )
    return {name: int(float(value)) for name, value in found}


async def flood(mcp_url: str, n: int, concurrency: int) -> tuple[Counter[int], float]:
    statuses: Counter[int] = Counter()
    remaining = n

    async def worker(http: httpx2.AsyncClient) -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            response = await http.post(mcp_url, json=INITIALIZE, headers=HEADERS)
            statuses[response.status_code] += 1

    started = time.perf_counter()
    async with client_from(FLOODER) as http:
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
    return statuses, time.perf_counter() - started


@dataclass
class Served:
    ok: int = 0
    failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)


async def keep_listing(mcp_url: str, stop: asyncio.Event, served: Served) -> None:
    """The other caller's session-based client, busy for as long as the flood lasts."""
    async with (
        client_from(OTHER) as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
    ):
        while not stop.is_set():
            started = time.perf_counter()
            try:
                await client.list_tools(cache_mode="bypass")
                served.ok += 1
                served.seconds.append(time.perf_counter() - started)
            except Exception as exc:  # counted, not raised: the bench reports what the caller met
                served.failed += 1
                served.errors[type(exc).__name__] += 1
            await asyncio.sleep(0.05)


async def fresh_client(mcp_url: str, address: str) -> tuple[bool, float, int]:
    """Open a session, list the tools: did it work, how long it took, how many tools."""
    started = time.perf_counter()
    try:
        async with (
            client_from(address) as http,
            Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
        ):
            listed = await client.list_tools(cache_mode="bypass")
    except Exception:  # reported as a failure in the table
        return False, time.perf_counter() - started, 0
    return True, time.perf_counter() - started, len(listed.tools)


async def run(n: int, concurrency: int, unbounded: bool) -> None:
    settings = {}
    if unbounded:
        settings = {
            "COLONNADE_SERVER__MAX_MCP_SESSIONS_PER_CALLER": "10000",
            "COLONNADE_SERVER__MAX_MCP_SESSIONS": "10000",
        }
    with demo_stack(settings) as stack:
        url = stack.mcp_url
        await fresh_client(url, OTHER)  # warm the gateway before measuring memory
        rss_before = rss_mb(stack.gateway_pid)
        stop, during = asyncio.Event(), Served()
        listing = asyncio.create_task(keep_listing(url, stop, during))
        await asyncio.sleep(0.5)
        statuses, flood_s = await flood(url, n, concurrency)
        stop.set()
        await listing
        sessions = await session_metrics(url)
        rss_after = rss_mb(stack.gateway_pid)
        other_ok, other_s, other_tools = await fresh_client(url, OTHER)
        same_ok, same_s, _ = await fresh_client(url, FLOODER)

    table = Table(title=f"session flood: {n} initialize from {FLOODER}, {concurrency} at a time")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("bounds", "10,000 total (old SDK-like)" if unbounded else "defaults (32 per caller, 1000 total)"),
        ("flood answers", ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items()))),
        ("flood time", f"{flood_s:.1f} s ({n / flood_s:.0f} initialize/s)"),
        ("sessions held after the flood", str(sessions.get("sessions", -1))),
        (
            "sessions closed for room / refused",
            f"{sessions.get('sessions_evicted_total', -1)} / {sessions.get('sessions_refused_total', -1)}",
        ),
        ("gateway RSS before", f"{rss_before:.1f} MB"),
        ("gateway RSS after", f"{rss_after:.1f} MB (+{rss_after - rss_before:.1f})"),
        ("other caller during flood: tools/list ok", str(during.ok)),
        ("other caller during flood: failed", f"{during.failed} {dict(during.errors) or ''}".strip()),
    ]
    if during.seconds:
        ordered = sorted(during.seconds)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        rows.append(
            (
                "other caller during flood: p50 / p95",
                f"{ordered[len(ordered) // 2] * 1000:.0f} / {p95 * 1000:.0f} ms",
            )
        )
    rows += [
        (
            f"fresh client at {OTHER} after",
            f"{'ok' if other_ok else 'FAILED'} in {other_s * 1000:.0f} ms ({other_tools} tools)",
        ),
        (
            f"fresh client at {FLOODER} (flooder's address) after",
            f"{'ok' if same_ok else 'FAILED'} in {same_s * 1000:.0f} ms",
        ),
    ]
    for row in rows:
        table.add_row(*row)
    Console(width=120).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="initialize requests the flooder sends")
    parser.add_argument("--concurrency", type=int, default=16, help="flood requests in flight at once")
    parser.add_argument("--unbounded", action="store_true", help="raise the bounds to 10,000 (old behaviour)")
    args = parser.parse_args()
    asyncio.run(run(args.n, args.concurrency, args.unbounded))


if __name__ == "__main__":
    main()
