"""What does reading a backend secret cost per call, by provider?

Measures `Secrets.resolve` (the resolver the gateway hands its adapters) in this process for a
secret in the environment, in a file, and in the sealed store on SQLite: with the replica's cache
(`vault.cache_s`, every call after the first within it) and without (`cache_s: 0`: one SELECT
and one AES-256-GCM open per call). Each variant runs several rounds; the table shows the median
round's CPU and wall-clock microseconds per call.

Run: .venv/bin/python bench/secret_resolution.py [--calls 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from colonnade.governance.principal import Principal
from colonnade.governance.secrets import EnvProvider, FileProvider, SecretAdmin, Secrets, SecretVault
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.sealing import Sealer
from colonnade.store.secrets_repo import SecretVersionStore


async def _per_call(work: Callable[[], Awaitable[object]], calls: int, rounds: int) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(rounds):
        started_cpu, started = time.process_time(), time.perf_counter()
        for _ in range(calls):
            await work()
        cpu.append((time.process_time() - started_cpu) / calls * 1e6)
        wall.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(cpu), statistics.median(wall)


async def main(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        secret_file = base / "crm"
        secret_file.write_text("file-value\n", encoding="utf-8")
        secret_file.chmod(0o600)
        engine = create_store_engine(f"sqlite+aiosqlite:///{base / 'bench.db'}")
        await migrate_engine(engine)
        sealer = Sealer.generate()
        store = SecretVersionStore(engine)
        cached = SecretVault(store, sealer, cache_s=3600)
        uncached = SecretVault(store, sealer, cache_s=0)
        await SecretAdmin(store, cached).set(
            Principal.system("bench"), "crm-token", "stored-value", tenant="acme"
        )
        environ = {"COLONNADE_SECRET_CRM_TOKEN": "env-value"}
        variants: list[tuple[str, Secrets, str]] = [
            ("env", Secrets({"env": EnvProvider(environ)}), "CRM_TOKEN"),
            ("file", Secrets({"file": FileProvider()}), f"file:{secret_file}"),
            ("store, cached", Secrets({"store": cached}), "store:crm-token"),
            ("store, cache_s 0 (SQLite)", Secrets({"store": uncached}), "store:crm-token"),
        ]
        table = Table("provider", "CPU us/call", "wall us/call")
        for label, resolver, reference in variants:
            assert await resolver.resolve(reference, tenant="acme") is not None, label
            many = calls if "cache_s 0" not in label else max(calls // 10, 100)

            async def work(resolver: Secrets = resolver, reference: str = reference) -> object:
                return await resolver.resolve(reference, tenant="acme")

            cpu, wall = await _per_call(work, many, rounds)
            table.add_row(label, f"{cpu:.1f}", f"{wall:.1f}")
        await engine.dispose()
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.rounds))
