"""What one call's audit record costs the gateway, part by part, in one process.

The record the audit stage writes for an allowed, successful `get_customer` call of the anonymous
loopback caller, appended with `AuditLog.append` to a migrated SQLite file (the embedded default:
`SqliteDirect`, WAL, `synchronous=NORMAL`), one caller at a time, so each append is committed
before the next starts; and its parts alone: the arguments' keyed hash, the event, the stored
row (scrubbing, pseudonyms), the chain's seal (canonical JSON and SHA-256). CPU microseconds of
this process (every thread: checkpoints on the writer's worker included), median of the rounds.

Compare source trees by running it with another tree first on PYTHONPATH, e.g.
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/audit_append.py

Run: .venv/bin/python bench/audit_append.py [--records 3000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import uvloop

from colonnade.governance.audit import AuditEvent, AuditLog
from colonnade.governance.audit.chain import seal
from colonnade.governance.principal import ANONYMOUS_LOOPBACK
from colonnade.store.audit_repo import AuditStore
from colonnade.store.engine import create_store_engine
from colonnade.store.migrator import migrate_engine

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gateway_floor import demo_read_event

ARGUMENTS = {"customer_id": "C-1001"}


def call_event(log: AuditLog, trace_id: str, call_id: str) -> AuditEvent:
    """The event the audit stage builds for the demo's read (see `calls/stages/audit.py`)."""
    return demo_read_event(ANONYMOUS_LOOPBACK, log.args_hash(ARGUMENTS), trace_id, call_id)


def cpu_us(work: Callable[[], object], n: int, rounds: int) -> float:
    costs = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(n):
            work()
        costs.append((time.process_time() - start) / n * 1e6)
    return statistics.median(costs)


async def main(records: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="colonnade-audit-") as folder:
        engine = create_store_engine(f"sqlite+aiosqlite:///{Path(folder) / 'colonnade.db'}")
        await migrate_engine(engine)
        log = AuditLog(AuditStore(engine), b"k" * 32)
        ids = [(uuid.uuid4().hex, str(uuid.uuid4())) for _ in range(records)]

        async def appends() -> None:
            for trace_id, call_id in ids:
                await log.append(call_event(log, trace_id, call_id))

        await appends()  # warm-up
        costs = []
        for _ in range(rounds):
            start = time.process_time()
            await appends()
            costs.append((time.process_time() - start) / records * 1e6)
        event = call_event(log, *ids[0])
        row = log.row(event)
        parts = {
            "arguments' keyed hash": cpu_us(lambda: log.args_hash(ARGUMENTS), records, rounds),
            "event (with that hash)": cpu_us(lambda: call_event(log, *ids[0]), records, rounds),
            "stored row (scrub, actor)": cpu_us(lambda: log.row(event), records, rounds),
            "seal of one record": cpu_us(lambda: seal(41, "a" * 64, [row]), records, rounds),
            "append, committed (all of it)": statistics.median(costs),
        }
        for name, cost in parts.items():
            print(f"{name:32} {cost:7.1f} us CPU")
        await log.store.aclose()
        await engine.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=3000, help="appends per round (default 3000)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (default 7)")
    arguments = parser.parse_args()
    uvloop.run(main(arguments.records, arguments.rounds))
