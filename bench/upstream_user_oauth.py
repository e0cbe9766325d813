"""What does mode user_oauth add to a call, with the person's access token in memory and without?

Runs the test provider (`tests/support/user_oauth_server.py`, Authlib, its own process), connects
one person through its consent form over HTTP (as the browser test does through the pages), keeps
the grant in a SQLite store, and measures `UpstreamCredentials.grant` in this process: the cached
access token (every call until it nears expiry), and a refresh (read the grant, open the sealed
refresh token, one round trip to the provider, seal and store the rotated one). The table shows
the median round's CPU and wall-clock microseconds per call.

Run: .venv/bin/python bench/upstream_user_oauth.py [--calls 20000] [--rounds 7] [--refreshes 50]
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
from urllib.parse import parse_qs, urlsplit

import httpx2
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from colonnade.adapters.credentials import UpstreamCredentials, UserOAuth
from colonnade.adapters.secrets import EnvSecretResolver
from colonnade.config import UserOAuthCredential, UserOAuthProvider
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.engine import create_store_engine
from colonnade.store.migrator import migrate_engine
from colonnade.store.sealing import Sealer
from colonnade.store.upstream_grants_repo import UpstreamGrantStore
from tests.support.user_oauth_rig import CLIENT_ID, CLIENT_SECRET, SECRET_NAME, provider_process

REDIRECT = "http://127.0.0.1:9/ui/connections/callback"


async def _per_call(work: Callable[[], Awaitable[object]], calls: int, rounds: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(rounds):
        started_cpu, started = time.process_time(), time.perf_counter()
        for _ in range(calls):
            await work()
        cpu.append((time.process_time() - started_cpu) / calls * 1e6)
        wall.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(cpu), statistics.median(wall)


async def _connect(oauth: UserOAuth, principal: Principal, provider_url: str) -> None:
    started = oauth.begin(principal, "crm", REDIRECT)
    async with httpx2.AsyncClient(follow_redirects=False) as browser:
        await browser.get(started.url)
        back = await browser.post(
            f"{provider_url}/authorize?{urlsplit(started.url).query}",
            data={"user": "alice@crm", "decision": "approve"},
        )
    returned = parse_qs(urlsplit(back.headers["location"]).query)
    await oauth.complete(started.binding, returned["state"][0], returned["code"][0], principal=principal)


async def _measure(
    provider_url: str, data: Path, calls: int, rounds: int, refreshes: int
) -> list[tuple[str, float, float]]:
    engine = create_store_engine(f"sqlite+aiosqlite:///{data / 'colonnade.db'}")
    await migrate_engine(engine)
    provider = UserOAuthProvider(
        authorization_endpoint=f"{provider_url}/authorize",
        token_endpoint=f"{provider_url}/token",
        revocation_endpoint=f"{provider_url}/revoke",
        client_id=CLIENT_ID,
        client_secret=SECRET_NAME,
        scopes=["crm.read"],
    )
    oauth = UserOAuth(
        {"crm": provider},
        EnvSecretResolver(),
        Sealer.load_or_create(data),
        UpstreamGrantStore(engine),
        connect_url="http://127.0.0.1:9/ui/connections",
    )
    credentials = UpstreamCredentials(user_oauth=oauth)
    principal = Principal(PrincipalKind.USER, "alice", tenant="acme")
    spec = UserOAuthCredential(mode="user_oauth", provider="crm")
    rows = []
    try:
        await _connect(oauth, principal, provider_url)
        before = oauth.refreshes
        rows.append(
            (
                "user_oauth, cached",
                *await _per_call(lambda: credentials.grant(spec, principal), calls, rounds),
            )
        )
        assert oauth.refreshes == before, "the cached rounds refreshed"

        async def refreshed() -> None:
            oauth.forget(principal.key)
            await credentials.grant(spec, principal)

        rows.append(
            ("user_oauth, refresh (store + provider round trip)", *await _per_call(refreshed, refreshes, 3))
        )
        assert oauth.refreshes == before + refreshes * 3
    finally:
        await credentials.aclose()
        await engine.dispose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--refreshes", type=int, default=50)
    args = parser.parse_args()
    os.environ[f"COLONNADE_SECRET_{SECRET_NAME}"] = CLIENT_SECRET
    with tempfile.TemporaryDirectory() as tmp, provider_process(Path(tmp) / "provider.log", REDIRECT) as url:
        rows = asyncio.run(_measure(url, Path(tmp), args.calls, args.rounds, args.refreshes))
    table = Table(title=f"user_oauth credential per call ({args.calls} calls x {args.rounds} rounds, median)")
    table.add_column("case")
    table.add_column("CPU us/call", justify="right")
    table.add_column("wall us/call", justify="right")
    for name, cpu, wall in rows:
        table.add_row(name, f"{cpu:.2f}", f"{wall:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
