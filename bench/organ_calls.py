"""What does an in-process organ call cost, directly and through the gateway's pipeline?

(a) `organ.stimulate` directly (the vault's `retrieve`: a SQLite read in a worker thread);
(b) the same through the executive (input schema check first);
(c) the same as a gateway call (`CallService.call`: the whole pipeline, no database);
(d) a pure coroutine function (`lab.spin` with 1 round) through the gateway: the pipeline's own cost.
Median and p95 of sequential calls, and the mean `cpu_ms` the organ reported.

Run: .venv/bin/python bench/organ_calls.py [--calls 2000]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from colonnade.calls.envelope import CallRequest  # noqa: E402
from colonnade.config import OrganSettings, Settings  # noqa: E402
from colonnade.organs import Executive, OrganHost, Stimulus, StimulusContext  # noqa: E402
from colonnade.runtime.gateway import Gateway  # noqa: E402
from examples.organs.vault import organ as vault  # noqa: E402
from tests.support.organs import lab  # noqa: E402

Call = Callable[[], Awaitable[float | None]]


async def measure(call: Call, count: int) -> tuple[float, float, float]:
    for _ in range(50):  # warm up: imports, first SQLite open, validators
        await call()
    times, cpus = [], []
    for _ in range(count):
        started = time.perf_counter()
        cpu = await call()
        times.append((time.perf_counter() - started) * 1000)
        cpus.append(cpu or 0.0)
    times.sort()
    return statistics.median(times), times[int(0.95 * len(times))], statistics.fmean(cpus)


async def main(count: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="organ-bench-"))
    host = OrganHost(organs=[vault, lab], data_dir=folder)
    executive = Executive.standalone(host, tenant="bench")
    gateway = Gateway(
        Settings(data_dir=folder, log_level="warning", organs=OrganSettings(tenant="bench")), organs=host
    )
    context = StimulusContext(data_dir=str(folder / "vault"))
    await vault.stimulate(
        Stimulus(op="store", input={"key": "k.txt", "content": "x" * 1000}, context=context)
    )

    async def direct() -> float | None:
        return (
            await vault.stimulate(Stimulus(op="retrieve", input={"key": "k.txt"}, context=context))
        ).cpu_ms

    async def via_executive() -> float | None:
        return (await executive.stimulate_organ("vault", "retrieve", {"key": "k.txt"})).cpu_ms

    async def via_gateway() -> float | None:
        result = await gateway.calls.call(CallRequest(tool_id="bench:vault:retrieve", input={"key": "k.txt"}))
        return result.metrics.cpu_ms

    async def pure_via_gateway() -> float | None:
        result = await gateway.calls.call(CallRequest(tool_id="bench:lab:spin", input={"rounds": 1}))
        return result.metrics.cpu_ms

    table = Table(title=f"in-process organ calls, {count} sequential calls each")
    for column in ("path", "median ms", "p95 ms", "mean cpu_ms (organ)"):
        table.add_column(column, justify="right" if column != "path" else "left")
    for name, call in (
        ("(a) vault.retrieve, stimulate directly", direct),
        ("(b) vault.retrieve, through the executive", via_executive),
        ("(c) vault.retrieve, through the gateway", via_gateway),
        ("(d) lab.spin (coroutine), through the gateway", pure_via_gateway),
    ):
        median, p95, cpu = await measure(call, count)
        table.add_row(name, f"{median:.3f}", f"{p95:.3f}", f"{cpu:.3f}")
    Console().print(table)
    await gateway.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000)
    asyncio.run(main(parser.parse_args().calls))
