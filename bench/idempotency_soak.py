"""Soak: does the embedded store stay bounded under keyed traffic? Database and WAL sizes over 50,000 calls.

Issue 11 measured the SQLite write-ahead log at 1.02 GB after 55,000 keyed calls: it was only ever
checkpointed PASSIVE-ly while writes went on, so it never restarted. Here keyed calls of a write tool
(`acme:crm:create_customer`, a new key each) go through the call service and the real idempotency
stage on a SQLite file; the execute stage is replaced by one that answers at once, so the run
measures the store, not a backend. The gateway's purge runs on its schedule, as in `colonnade serve`.
The sizes are printed during the run, after it, and after idling (when the log is truncated); a short
`--retention-s` with a short `--purge-every-s` shows the database itself staying bounded too.

Run: .venv/bin/python bench/idempotency_soak.py [--calls 50000] [--retention-s 86400] [--purge-every-s 60]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, CallStatus
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.service import CallService
from colonnade.calls.stages.idempotency import Idempotency
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.idempotency_repo import IdempotencyStore
from colonnade.store.sqlite_direct import IDLE_S

TOOL = "acme:crm:create_customer"


class _Answer:
    """The last stage: a created customer, as the demo backend would answer, without the network."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        customer = {
            "id": f"C-{uuid.uuid4().int % 10**9}",
            "name": call.request.input["name"],
            "email": call.request.input["email"],
            "company": None,
            "created_at": "2026-11-24T08:00:00Z",
        }
        return call.result(CallStatus.SUCCESS, output=customer)


def _sizes(database: Path) -> tuple[int, int]:
    wal = database.with_name(database.name + "-wal")
    return database.stat().st_size, wal.stat().st_size if wal.exists() else 0


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.2f}"


async def main(calls: int, concurrency: int, retention_s: float, purge_every_s: float, every: int) -> None:
    console = Console()
    table = Table(title=f"embedded store under {calls:,} keyed calls ({concurrency} at a time)")
    for column in ("when", "calls", "database MB", "WAL MB", "calls/s"):
        table.add_column(column, justify="left" if column == "when" else "right")
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "soak.db"
        engine = create_store_engine(f"sqlite+aiosqlite:///{database}")
        await migrate_engine(engine)
        data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
        catalog = Catalog()
        catalog.publish(Contract.model_validate(data))
        store = IdempotencyStore(engine)
        service = CallService(catalog, Pipeline([Idempotency(store, retention_s=retention_s), _Answer()]))
        numbers = iter(range(calls))
        done, wal_peak = 0, 0
        started = last_purge = time.perf_counter()

        async def caller() -> None:
            nonlocal done, wal_peak, last_purge
            for n in numbers:
                request = CallRequest(
                    tool_id=TOOL,
                    input={"name": f"Soak Customer {n}", "email": f"soak-{n}@example.com"},
                    constraints=CallConstraints(idempotency_key=f"soak-{n}"),
                )
                result = await service.call(request)
                if not result.ok:
                    raise SystemExit(f"call {n} failed: {result.error}")
                done += 1
                wal_peak = max(wal_peak, _sizes(database)[1])
                if done % every == 0:
                    size, wal = _sizes(database)
                    rate = done / (time.perf_counter() - started)
                    table.add_row("during", f"{done:,}", _mb(size), _mb(wal), f"{rate:,.0f}")
                if time.perf_counter() - last_purge >= purge_every_s:
                    last_purge = time.perf_counter()
                    await store.purge_expired()

        await asyncio.gather(*(caller() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
        size, wal = _sizes(database)
        table.add_row("after the run", f"{done:,}", _mb(size), _mb(wal), f"{done / elapsed:,.0f}")
        await asyncio.sleep(IDLE_S + 1.0)
        size, wal = _sizes(database)
        table.add_row(f"idle {IDLE_S + 1.0:g} s", f"{done:,}", _mb(size), _mb(wal), "")
        purged = await store.purge_expired()
        await store.aclose()
        await engine.dispose()
        size, wal = _sizes(database)
        table.add_row("closed", f"{done:,}", _mb(size), _mb(wal), "")
    console.print(table)
    console.print(f"largest WAL seen: {_mb(wal_peak)} MB; records purged at the end: {purged:,}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=50_000, help="keyed calls (default 50000)")
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight (default 16)")
    parser.add_argument(
        "--retention-s", type=float, default=86_400.0, help="idempotency retention (default 86400)"
    )
    parser.add_argument(
        "--purge-every-s", type=float, default=60.0, help="purge interval, as the gateway's (default 60)"
    )
    parser.add_argument("--every", type=int, default=5_000, help="print a row every N calls (default 5000)")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.concurrency, args.retention_s, args.purge_every_s, args.every))
