"""How long a key revoked through one replica stays usable on the others: real gateway processes.

Three `colonnade serve` replicas on one PostgreSQL database (made for the run, dropped after) and one
Redis prefix. Each round makes a key, has every other replica check (and cache) it, revokes it with
`DELETE /v1/keys/{id}` on the first replica, and polls the others until they answer 401: the time
from the revocation's answer to the last replica's refusal. With `--baseline-rounds N` the same
rounds run on replicas without Redis (the 5 s key cache's poll, as before the fan-out), in the same
run, for the ratio.

Run: .venv/bin/python bench/revocation_spread.py [--rounds 30] [--baseline-rounds 3]
     [--postgres postgresql+asyncpg://postgres@127.0.0.1:5432/test] [--redis redis://127.0.0.1:6379/0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2

from colonnade.store import create_store_engine

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import COLONNADE, free_port, gateway_process, percentile, stop_all, wait_http

_KEY = re.compile(r"col_[a-z0-9]{12}_[A-Za-z0-9_-]{43}")


async def _database(admin_url: str, name: str, *, drop: bool) -> None:
    engine = create_store_engine(admin_url)
    try:
        async with engine.execution_options(isolation_level="AUTOCOMMIT").connect() as connection:
            statement = (
                f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' if drop else f'CREATE DATABASE "{name}"'
            )
            await connection.exec_driver_sql(statement)
    finally:
        await engine.dispose()


@contextlib.contextmanager
def _replicas(postgres: str, redis: str | None, count: int) -> Iterator[tuple[list[str], str]]:
    """`count` replicas (base URLs) and an admin key; their database is dropped afterwards."""
    name = f"colonnade_bench_spread_{uuid.uuid4().hex[:10]}"
    asyncio.run(_database(postgres, name, drop=False))
    url = postgres.rsplit("/", 1)[0] + f"/{name}"
    with tempfile.TemporaryDirectory(prefix="colonnade-spread-") as tmp, contextlib.ExitStack() as logs:
        home = Path(tmp)
        env = {
            "COLONNADE_DATA_DIR": str(home / "data"),
            "COLONNADE_DATABASE_URL": url,
            "COLONNADE_AUTH__ENABLED": "true",
            "COLONNADE_AUTH__RESOURCE": "http://127.0.0.1/mcp",
            "COLONNADE_LOG_LEVEL": "warning",
        }
        if redis is not None:
            env["COLONNADE_SHARED_STATE__REDIS_URL"] = redis
            env["COLONNADE_SHARED_STATE__KEY_PREFIX"] = f"bench-{uuid.uuid4().hex[:8]}"
        procs: list[subprocess.Popen[bytes]] = []
        try:
            bases = []
            for number in range(count):
                folder = home / f"replica-{number}"
                folder.mkdir()
                port = free_port()
                procs.append(gateway_process(folder, port, [], logs, env))
                bases.append(f"http://127.0.0.1:{port}")
                wait_http(f"{bases[-1]}/readyz", procs[-1], timeout=60)
            made = subprocess.run(
                [str(COLONNADE), "keys", "create", "--owner", "root", "--persona", "admin"],
                env={**env, "PATH": str(COLONNADE.parent)},
                capture_output=True,
                text=True,
                check=True,
            )
            found = _KEY.search(made.stdout)
            if found is None:
                raise SystemExit(f"no key in the output of keys create: {made.stdout!r}")
            yield bases, found.group(0)
        finally:
            stop_all(procs)
            asyncio.run(_database(postgres, name, drop=True))


def _rounds(bases: list[str], admin: str, rounds: int, requests: list[float]) -> list[float]:
    """Seconds from each revocation's answer to the last replica's refusal; `requests` gets the
    wall time of every polling request (the resolution of the measurement)."""
    headers = {"authorization": f"Bearer {admin}"}
    clients = [httpx2.Client(base_url=base, timeout=30) for base in bases]
    spreads = []
    try:
        first, others = clients[0], clients[1:]
        for _ in range(rounds):
            made = first.post("/v1/keys", headers=headers, json={"owner": "victim", "persona": "admin"})
            made.raise_for_status()
            token, key_id = made.json()["token"], made.json()["key"]["id"]
            victim = {"authorization": f"Bearer {token}"}
            for other in others:
                assert other.get("/v1/tools", headers=victim).status_code == 200
            first.delete(f"/v1/keys/{key_id}", headers=headers).raise_for_status()
            answered = time.perf_counter()
            waiting = list(others)
            while waiting:
                still = []
                for client in waiting:
                    sent = time.perf_counter()
                    refused = client.get("/v1/tools", headers=victim).status_code == 401
                    requests.append(time.perf_counter() - sent)
                    if not refused:
                        still.append(client)
                waiting = still
                if time.perf_counter() - answered > 60:
                    raise SystemExit("a revoked key was still accepted after 60 s")
            spreads.append(time.perf_counter() - answered)
    finally:
        for client in clients:
            client.close()
    return spreads


def _line(label: str, spreads: list[float]) -> str:
    return (
        f"{label}: {len(spreads)} revocations, accepted elsewhere for p50 "
        f"{statistics.median(spreads) * 1000:7.1f} ms, p99 {percentile(spreads, 0.99) * 1000:7.1f} ms, "
        f"max {max(spreads) * 1000:7.1f} ms after DELETE answered"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--baseline-rounds", type=int, default=0)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--postgres", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    with _replicas(args.postgres, args.redis, args.replicas) as (bases, admin):
        requests: list[float] = []
        shared = _rounds(bases, admin, args.rounds, requests)
    print(_line(f"{args.replicas} replicas, Redis fan-out", shared))
    print(f"  one polling request (GET /v1/tools) took p50 {statistics.median(requests) * 1000:.1f} ms")
    if args.baseline_rounds:
        with _replicas(args.postgres, None, args.replicas) as (bases, admin):
            polled = _rounds(bases, admin, args.baseline_rounds, [])
        print(_line(f"{args.replicas} replicas, no Redis (poll)", polled))
        print(f"median ratio poll / fan-out: {statistics.median(polled) / statistics.median(shared):.0f}x")


if __name__ == "__main__":
    main()
