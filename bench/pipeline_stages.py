"""What each guarantee of the call pipeline costs: per-stage added latency, in one process.

The same read operation (acme:crm:get_customer on the real demo backend, a child process on
loopback) is called through pipelines that grow one stage at a time, from the bare adapter call to
the full pipeline with an idempotency key on every call (SQLite) and output validation. The
difference between consecutive medians is the stage's cost.

The pipelines take turns call by call (one call through each, in a shuffled order, then the next
round), so they all see the same machine: on a shared virtual machine the speed drifts by more
than most stages cost, and measuring one pipeline after another would charge that drift to a stage.

Run: .venv/bin/python bench/pipeline_stages.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import ROOT, demo_stack

from colonnade.adapters.health_monitor import HealthMonitor
from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http.tools import HttpTools
from colonnade.adapters.registry import AdapterRegistry
from colonnade.calls.envelope import CallConstraints, CallRequest
from colonnade.calls.pipeline import Pipeline, Stage
from colonnade.calls.service import CallService
from colonnade.calls.stages.admission import Admission
from colonnade.calls.stages.approval import ApprovalGate
from colonnade.calls.stages.authorize import Authorize
from colonnade.calls.stages.capacity import Capacity
from colonnade.calls.stages.circuit import CircuitBreaker
from colonnade.calls.stages.drain import Drain
from colonnade.calls.stages.dry_run import DryRun
from colonnade.calls.stages.execute import Execute
from colonnade.calls.stages.health import HealthGate
from colonnade.calls.stages.idempotency import Idempotency
from colonnade.calls.stages.network import NetworkPolicy
from colonnade.calls.stages.observe import Observe
from colonnade.calls.stages.resolve import Resolve
from colonnade.calls.stages.retry import Retry
from colonnade.calls.stages.validate_input import InputValidation
from colonnade.calls.stages.validate_output import OutputValidation
from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import Contract
from colonnade.observability.logging import configure_logging
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.idempotency_repo import IdempotencyStore

TOOL = "acme:crm:get_customer"


class _Variant:
    """One pipeline of the ladder and the latencies of its calls."""

    def __init__(self, label: str, service: CallService, keyed: bool) -> None:
        self.label = label
        self.service = service
        self.keyed = keyed
        self.samples: list[float] = []

    async def call(self) -> float:
        key = uuid.uuid4().hex if self.keyed else None
        request = CallRequest(
            tool_id=TOOL, input={"customer_id": "C-1001"}, constraints=CallConstraints(idempotency_key=key)
        )
        started = time.perf_counter()
        result = await self.service.call(request)
        elapsed = (time.perf_counter() - started) * 1000
        if not result.ok:
            raise SystemExit(f"call failed through {self.label!r}: {result.error}")
        return elapsed


async def _interleaved(variants: list[_Variant], calls: int) -> None:
    """Warm every pipeline up, then time `calls` rounds of one call through each."""
    for _ in range(100):
        for variant in variants:
            await variant.call()
    order = random.Random(7)
    for _ in range(calls):
        # a new order each round, so no pipeline always follows the same one (a keyed call right
        # after another keyed call may find the SQLite write lock still held)
        for variant in order.sample(variants, len(variants)):
            variant.samples.append(await variant.call())


async def main(calls: int) -> None:
    console = Console()
    with demo_stack() as stack, tempfile.TemporaryDirectory() as tmp:
        log = (Path(tmp) / "calls.log").open("w")  # set-up, before timing starts
        configure_logging("info", stream=log)
        data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
        data["backend"]["base_url"] = stack.backend_url
        catalog = Catalog()
        catalog.publish(Contract.model_validate(data))
        engine = create_store_engine(f"sqlite+aiosqlite:///{tmp}/bench.db")
        await migrate_engine(engine)
        http = HttpAdapter()
        ladder: list[tuple[str, Stage, bool]] = [
            ("+ circuit breaker", CircuitBreaker(), False),
            ("+ retry", Retry(), False),
            ("+ output validation", OutputValidation(), False),
            ("+ capacity", Capacity(), False),
            ("+ idempotency (new key per call, SQLite)", Idempotency(IdempotencyStore(engine)), True),
            ("+ dry-run check", DryRun(), True),
            ("+ health gate", HealthGate(HealthMonitor()), True),
            ("+ network policy", NetworkPolicy(), True),
            ("+ input validation", InputValidation(), True),
            ("+ approval gate", ApprovalGate(), True),
            ("+ authorize (allow all)", Authorize(), True),
            ("+ admission", Admission(), True),
            ("+ drain", Drain(), True),
        ]
        adapters = AdapterRegistry({"http": HttpTools(http)})
        stages: list[Stage] = [Resolve(catalog), Execute(adapters)]
        bare = CallService(Pipeline(stages))
        variants = [_Variant("resolve + bare adapter call (execute)", bare, False)]
        for label, stage, keyed in ladder:
            stages.insert(1, stage)
            variants.append(_Variant(label, CallService(Pipeline(stages)), keyed))
        observe = Observe()
        observed = [observe, stages[0], observe.in_flight(), *stages[1:]]
        variants.append(
            _Variant("+ observe (span, metrics, JSON log line)", CallService(Pipeline(observed)), True)
        )
        await _interleaved(variants, calls)
        rows = [(variant.label, statistics.median(variant.samples)) for variant in variants]
        await http.aclose()
        await engine.dispose()
    table = Table(title=f"pipeline cost per stage: median of {calls} interleaved calls of {TOOL}")
    for column in ("pipeline", "median ms", "added ms"):
        table.add_column(column, justify="left" if column == "pipeline" else "right")
    previous = rows[0][1]
    for label, median in rows:
        table.add_row(label, f"{median:.3f}", f"{median - previous:+.3f}")
        previous = median
    console.print(table)
    console.print(f"whole pipeline over the bare adapter call: {rows[-1][1] - rows[0][1]:+.3f} ms median")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="calls per pipeline (default 2000)")
    asyncio.run(main(parser.parse_args().calls))
