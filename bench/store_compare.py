"""Durable per-call writes on PostgreSQL against SQLite, both stores in one run.

Each keyed call makes three durable writes before it is answered: the idempotency claim (before
it runs), its outcome, and its chained audit record (on PostgreSQL the last two share a commit).
This runs the stages that make them, the audit and idempotency stages in front of a stage that
answers at once, in this process, on a fresh
SQLite file (the embedded default) and on a fresh PostgreSQL database (created on the server at
`--postgres` and dropped afterwards), one caller at a time and 8 at once. It prints the gateway's
CPU microseconds per call (this process, every thread, as `_stack.cost_rounds` measures: on SQLite
the database's own work is in it), the PostgreSQL server's CPU per call beside it (the backends of
this run's connections, read from /proc), keyed calls per second at 8 callers, and the item 5
targets of issue 34 (PostgreSQL at most 1.3x SQLite's CPU per call, at least 80 % of its calls/s)
as met or not met. Every figure is the median round.

Compare source trees by running it with another tree first on PYTHONPATH, e.g.
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/store_compare.py

Run: .venv/bin/python bench/store_compare.py [--calls 1500] [--rounds 3] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import uvloop
import yaml
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import cpu_seconds

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallConstraints, CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.stages.audit import Audit
from colonnade.calls.stages.idempotency import Idempotency
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.governance.audit import AuditLog
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.audit_repo import AuditStore
from colonnade.store.idempotency_repo import IdempotencyStore

ROOT = Path(__file__).resolve().parents[1]
TOOL = "acme:crm:create_customer"
CALLERS = 8
CPU_TARGET = 1.3
RATE_TARGET = 0.8
AGENT = Principal(
    PrincipalKind.AGENT, "bench-agent", tenant="acme", persona="agent", scopes=PERSONA_SCOPES[Persona.AGENT]
)


class Answer:
    """The tool's answer at once: what is measured is what the stages in front of it cost."""

    async def __call__(self, call: Call, next: Next) -> CallResult:
        return call.result(CallStatus.SUCCESS, output={"id": "C-2001", "name": "Ada"})


@dataclass(frozen=True)
class Figures:
    """Median rounds of one store: CPU µs per call (gateway, database server), calls/s."""

    cpu_one: float
    server_one: float | None
    wall_one: float
    cpu_many: float
    server_many: float | None
    rate_many: float


def _tool_calls(count: int) -> list[Call]:
    """Calls with keys of their own; each is started again (`_fresh`) when it enters the pipeline."""
    crm = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text(encoding="utf-8"))
    catalog = Catalog()
    catalog.publish(Contract.model_validate({**crm, "tenant": "acme", "name": "crm"}))
    tool = catalog.get(TOOL)
    if tool is None:
        raise SystemExit(f"the demo CRM contract has no {TOOL}; adjust TOOL in {__file__}")
    manifest = Manifests().for_tool(tool)
    run = uuid.uuid4().hex[:8]
    return [
        Call.start(
            CallRequest(
                tool_id=TOOL,
                input={"name": "Ada", "email": f"ada{n}@example.com"},
                constraints=CallConstraints(idempotency_key=f"{run}-{n}", timeout_ms=30_000),
            ),
            tool,
            manifest,
            principal=AGENT,
        )
        for n in range(count)
    ]


def _fresh(call: Call) -> Call:
    """The call as it enters the pipeline now, so its deadline runs from now (as a surface starts it)."""
    return Call.start(call.request, call.tool, call.manifest, principal=call.principal)


class ServerCpu:
    """CPU seconds the PostgreSQL backends of this run's connections have used (None on SQLite)."""

    def __init__(self, engine: AsyncEngine, application_name: str | None) -> None:
        self.engine, self.name = engine, application_name

    async def by_backend(self) -> dict[int, float] | None:
        if self.name is None:
            return None
        async with self.engine.connect() as conn:
            pids = (
                await conn.execute(
                    text("SELECT pid FROM pg_stat_activity WHERE application_name = :n"), {"n": self.name}
                )
            ).scalars()
            return {int(pid): cpu_seconds(int(pid)) or 0.0 for pid in pids}


async def _rounds(
    work: Callable[[list[Call]], Awaitable[None]], calls: list[Call], n: int, rounds: int, server: ServerCpu
) -> tuple[float, float | None, float]:
    """Median CPU µs/call (gateway), server CPU µs/call and wall µs/call over `rounds` of `n` calls."""
    warm = min(500, n)
    await work(calls[:warm])
    cpu, served, wall = [], [], []
    for index in range(rounds):
        batch = calls[warm + index * n : warm + (index + 1) * n]
        before_server = await server.by_backend()
        t0, c0 = time.perf_counter(), time.process_time()
        await work(batch)
        wall.append((time.perf_counter() - t0) / n * 1e6)
        cpu.append((time.process_time() - c0) / n * 1e6)
        after_server = await server.by_backend()
        if before_server is not None and after_server is not None:  # a backend started meanwhile: all of it
            used = sum(cpu - before_server.get(pid, 0.0) for pid, cpu in after_server.items())
            served.append(used / n * 1e6)
    return statistics.median(cpu), (statistics.median(served) if served else None), statistics.median(wall)


async def measure(url: str, n: int, rounds: int, application_name: str | None) -> Figures:
    connect_args = {"server_settings": {"application_name": application_name}} if application_name else {}
    engine = create_store_engine(url, connect_args=connect_args)
    await migrate_engine(engine)
    log = AuditLog(AuditStore(engine), b"k" * 32)
    idempotency = Idempotency(IdempotencyStore(engine))
    pipeline = Pipeline([Audit(log), idempotency, Answer()])
    server = ServerCpu(engine, application_name)
    per_round = n - n % CALLERS
    calls = _tool_calls(2 * (min(500, n) + rounds * n))
    one_caller, many_callers = calls[: len(calls) // 2], calls[len(calls) // 2 :]

    async def alone(batch: list[Call]) -> None:
        for call in batch:
            result = await pipeline.run(_fresh(call))
            assert result.status is CallStatus.SUCCESS, result.error

    async def together(batch: list[Call]) -> None:
        async def caller(share: list[Call]) -> None:
            for call in share:
                result = await pipeline.run(_fresh(call))
                assert result.status is CallStatus.SUCCESS, result.error

        await asyncio.gather(*(caller(batch[i::CALLERS]) for i in range(CALLERS)))

    try:
        cpu_one, server_one, wall_one = await _rounds(alone, one_caller, n, rounds, server)
        cpu_many, server_many, wall_many = await _rounds(together, many_callers, per_round, rounds, server)
    finally:
        await idempotency.drain()
        await log.aclose()
        await idempotency.store.aclose()
        await log.store.aclose()
        await engine.dispose()
    return Figures(cpu_one, server_one, wall_one, cpu_many, server_many, 1e6 / wall_many)


async def _with_database(admin_url: str, work: Callable[[str], Awaitable[Figures]]) -> Figures:
    """`work` on a fresh PostgreSQL database beside `admin_url`'s, dropped afterwards."""
    name = f"colonnade_bench_{uuid.uuid4().hex[:10]}"
    admin = create_store_engine(admin_url, connect_args={"timeout": 5})
    autocommit = admin.execution_options(isolation_level="AUTOCOMMIT")
    try:
        async with autocommit.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
            return await work(url)
        finally:
            async with autocommit.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()


async def _asleep_cpu(naps: int = 300, nap_s: float = 0.002) -> float:
    """CPU µs this process is charged per ms it sleeps in the event loop (waking up is not free)."""
    await asyncio.sleep(0)
    start = time.process_time()
    for _ in range(naps):
        await asyncio.sleep(nap_s)
    return (time.process_time() - start) / (naps * nap_s * 1000) * 1e6


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def _server(value: float | None) -> str:
    return "in process" if value is None else f"{value:7.1f}"


async def main(n: int, rounds: int, postgres: str) -> None:
    with tempfile.TemporaryDirectory(prefix="colonnade-store-compare-") as folder:
        sqlite = await measure(f"sqlite+aiosqlite:///{Path(folder) / 'colonnade.db'}", n, rounds, None)
    app = f"colonnade-store-compare-{uuid.uuid4().hex[:8]}"
    pg = await _with_database(postgres, lambda url: measure(url, n, rounds, app))
    asleep = await _asleep_cpu()
    print(f"Keyed calls (claim + outcome + audit record), {n} calls x {rounds} rounds, median round")
    print(f"{'store':<12}{'CPU µs/call 1':>15}{'server µs 1':>13}{'wall µs 1':>11}{'CPU µs/call 8':>15}"
          f"{'server µs 8':>13}{'calls/s at 8':>14}")  # fmt: skip
    for label, fig in (("SQLite", sqlite), ("PostgreSQL", pg)):
        print(
            f"{label:<12}{fig.cpu_one:15.1f}{_server(fig.server_one):>13}{fig.wall_one:11.0f}{fig.cpu_many:15.1f}"
            f"{_server(fig.server_many):>13}{fig.rate_many:14.0f}"
        )
    print(f"this machine charges {asleep:.0f} µs of CPU per ms a process sleeps (asyncio.sleep probe): "
          "a caller that waits for a commit pays for the wait too")  # fmt: skip
    one, many = pg.cpu_one / sqlite.cpu_one, pg.cpu_many / sqlite.cpu_many
    rate = pg.rate_many / sqlite.rate_many
    print(f"gateway CPU per call, PostgreSQL/SQLite, 1 caller:  {one:.2f}x (target <= {CPU_TARGET}x: "
          f"{_verdict(one <= CPU_TARGET)})")  # fmt: skip
    print(f"gateway CPU per call, PostgreSQL/SQLite, 8 callers: {many:.2f}x (target <= {CPU_TARGET}x: "
          f"{_verdict(many <= CPU_TARGET)})")  # fmt: skip
    print(f"keyed calls/s at 8 callers, PostgreSQL/SQLite:      {rate:.0%} (target >= {RATE_TARGET:.0%}: "
          f"{_verdict(rate >= RATE_TARGET)})")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--postgres",
        default="postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        help="a PostgreSQL URL whose server may create (and drop) a database for this run",
    )
    args = parser.parse_args()
    uvloop.run(main(args.calls, args.rounds, args.postgres))
