"""What does a usage view cost, read from the audit log? The reason it is not a consumer roll-up.

Fills a SQLite audit log (the embedded default) with N call records of 17 consumers through
`AuditLog` (real sealing and chaining, each with its `duration_ms`), then times `CallFigures.consumer`
for one consumer's last hour (the store filters by actor; no index on actor) and for an admin's
view of everyone (the newest `CONSUMER_SCAN` records of the window), and rendering that view as the page.
Median of several rounds, wall-clock milliseconds.

Run: .venv/bin/python bench/usage_view.py [--sizes 10000,50000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from colonnade.catalog.catalog import Catalog
from colonnade.governance.audit import AuditEvent, AuditLog, EventKind
from colonnade.governance.authorization import AllowAll
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.platform.usage import CallFigures
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.audit_repo import AuditStore
from colonnade.surfaces.pages.usage_page import usage_page

_TOOLS = [f"acme:items:tool_{n}" for n in range(40)]


async def _fill(log: AuditLog, upto: int, have: int) -> None:
    batch = 500
    for start in range(have, upto, batch):
        events = [
            AuditEvent(
                EventKind.CALL,
                actor=f"user:u{n % 17}",
                actor_kind="user",
                tenant="acme",
                tool=_TOOLS[n % len(_TOOLS)],
                args_hash=log.args_hash({"n": n}),
                decision="allow",
                outcome="success" if n % 9 else "invalid_request",
                trace_id=f"{n:032x}",
                details={"duration_ms": f"{(n % 97) * 0.37:.3f}"},
            )
            for n in range(start, min(start + batch, upto))
        ]
        await asyncio.gather(*(log.append(event) for event in events))


async def _median_ms(work: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def main(sizes: list[int], rounds: int) -> None:
    console = Console()
    table = Table("records", "one consumer (ms)", "its calls", "admin, everyone (ms)", "read", "render (ms)")
    consumer = Principal(
        PrincipalKind.USER, "u3", tenant="acme", persona="consumer", scopes=PERSONA_SCOPES[Persona.CONSUMER]
    )
    admin = Principal(
        PrincipalKind.USER, "ada", tenant="acme", persona="admin", scopes=PERSONA_SCOPES[Persona.ADMIN]
    )
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_store_engine(f"sqlite+aiosqlite:///{Path(tmp) / 'audit.db'}")
        await migrate_engine(engine)
        store = AuditStore(engine)
        log = AuditLog(store, b"k" * 32)
        figures = CallFigures(Catalog(), AllowAll(), None, log)
        have = 0
        for size in sizes:
            await _fill(log, size, have)
            have = size
            own = await figures.consumer(consumer, "hour")
            everyone = await figures.consumer(admin, "hour")
            assert own is not None and everyone is not None
            own_ms = await _median_ms(lambda: figures.consumer(consumer, "hour"), rounds)
            all_ms = await _median_ms(lambda: figures.consumer(admin, "hour"), rounds)
            started = time.perf_counter()
            usage_page(everyone)
            render_ms = (time.perf_counter() - started) * 1000
            table.add_row(
                str(size),
                f"{own_ms:.1f}",
                str(len(own.calls)),
                f"{all_ms:.1f}",
                str(len(everyone.calls)),
                f"{render_ms:.1f}",
            )
        await store.aclose()
        await engine.dispose()
    console.print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main([int(s) for s in arguments.sizes.split(",")], arguments.rounds))
