"""What does acting for the caller upstream add to a call once its exchanged token is cached?

Runs the test authorization server (`tests/support/exchange_server.py`, Authlib, its own process),
mints one user token, and measures `UpstreamCredentials.grant` in this process: mode `exchange`
with the exchanged token cached (every call after the first), mode `forward`, and, for scale, the
first (uncached) exchange, which is one round trip to the authorization server. Each variant runs
several rounds; the table shows the median round's CPU and wall-clock microseconds per call.

Run: .venv/bin/python bench/upstream_exchange.py [--calls 20000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from colonnade.adapters.credentials import TokenExchange, UpstreamCredentials
from colonnade.adapters.secrets import EnvSecretResolver
from colonnade.config import ExchangeCredential, ForwardCredential, TokenExchangeSettings
from colonnade.governance.principal import CallerToken, Principal, PrincipalKind
from tests.support.exchange_rig import CLIENT_ID, CLIENT_SECRET, SECRET_NAME, authorization_server


async def _per_call(work: Callable[[], Awaitable[object]], calls: int, rounds: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(rounds):
        started_cpu, started = time.process_time(), time.perf_counter()
        for _ in range(calls):
            await work()
        cpu.append((time.process_time() - started_cpu) / calls * 1e6)
        wall.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(cpu), statistics.median(wall)


async def _measure(as_url: str, calls: int, rounds: int) -> list[tuple[str, float, float]]:
    audience = "urn:bench"
    minted = httpx2.post(
        f"{as_url}/mint",
        json={"claims": {"sub": "alice", "aud": ["gw", audience], "scope": "a"}, "ttl_s": 3600},
    ).json()["token"]
    caller = CallerToken(minted, as_url, "alice", frozenset({"gw", audience}), time.time() + 3600)
    principal = Principal(PrincipalKind.USER, "alice", caller_token=caller)
    settings = TokenExchangeSettings(
        token_endpoint=f"{as_url}/token", client_id=CLIENT_ID, client_secret=SECRET_NAME
    )
    exchange = TokenExchange(settings, EnvSecretResolver())
    credentials = UpstreamCredentials(exchange)
    exchanged = ExchangeCredential(mode="exchange", audience=audience, scopes=["a"])
    forward = ForwardCredential(mode="forward", audience=audience)
    rows = []
    try:
        first = 0.0
        for index in range(20):  # uncached: a new scope set each time is a new cache key
            spec = ExchangeCredential(mode="exchange", audience=audience, scopes=[f"s{index}"])
            started = time.perf_counter()
            await credentials.grant(spec, principal)
            first += (time.perf_counter() - started) / 20 * 1e6
        rows.append(("exchange, first call (one AS round trip, wall)", float("nan"), first))
        await credentials.grant(exchanged, principal)
        before = exchange.exchanges
        rows.append(
            (
                "exchange, cached",
                *await _per_call(lambda: credentials.grant(exchanged, principal), calls, rounds),
            )
        )
        assert exchange.exchanges == before, "the cached rounds exchanged again"
        rows.append(
            ("forward", *await _per_call(lambda: credentials.grant(forward, principal), calls, rounds))
        )
    finally:
        await credentials.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ[f"COLONNADE_SECRET_{SECRET_NAME}"] = CLIENT_SECRET
    with tempfile.TemporaryDirectory() as tmp, authorization_server(Path(tmp) / "as.log") as as_url:
        rows = asyncio.run(_measure(as_url, args.calls, args.rounds))
    table = Table(title=f"upstream credential per call ({args.calls} calls x {args.rounds} rounds, median)")
    table.add_column("mode")
    table.add_column("CPU us/call", justify="right")
    table.add_column("wall us/call", justify="right")
    for name, cpu, wall in rows:
        table.add_row(name, "-" if cpu != cpu else f"{cpu:.2f}", f"{wall:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
