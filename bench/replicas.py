"""1 vs 3 gateway replicas behind HAProxy on PostgreSQL: gateway CPU per call, p50/p99, calls/s.

Each deployment is the one the replica tests run (tests/support/replicas.py: `colonnade serve`
processes on one private PostgreSQL database, HAProxy round-robin in front), serving the fault
backend's contract (a child process). CALLERS concurrent callers send REST calls through the
balancer: reads (`get_item`) and keyed writes (`create_effect` with an idempotency key, which the
gateway records durably before it answers). Gateway CPU per call is the replicas' user + system CPU
over the measured calls (from /proc), so the balancer, the backend and the load generator, which
share the machine, are not in it; they are shown apart.

On a machine with fewer cores than replicas + balancer + backend + callers, three replicas cannot
be faster than one: the figures to plan with are the CPU per call (it says how many cores a load
needs) and how it changes from one replica to three (the cost of sharing the database).

Run: .venv/bin/python bench/replicas.py [--calls 2000] [--callers 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import yaml
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _stack import cpu_seconds, free_port, wait_http
from scripts.replica_setup import find_haproxy

from tests.support.fault_contract import fault_contract
from tests.support.replicas import ReplicaSet, running_replicas

POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
ROOT = Path(__file__).resolve().parents[1]
WARM_UP = 200
IDLE_S = 6.0


@dataclass
class Result:
    replicas: int
    kind: str
    calls: int
    failed: int
    seconds: float
    latencies_ms: list[float]
    gateway_cpu_s: float
    haproxy_cpu_s: float
    backend_cpu_s: float
    idle_cores: float
    """What the replicas use together with no calls (catalog poll, health probes, balancer checks)."""

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_us_per_call(self) -> float:
        return self.gateway_cpu_s / self.calls * 1e6

    @property
    def net_cpu_us_per_call(self) -> float:
        """The calls' own CPU: what the replicas would have used idle over the same time taken off."""
        return (self.gateway_cpu_s - self.idle_cores * self.seconds) / self.calls * 1e6

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@contextmanager
def fault_backend(folder: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    log = (folder / "backend.log").open("wb")
    command = [sys.executable, "-m", "tests.support.fault_backend", "--port", str(port)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def _request(kind: str, n: int, run: str) -> dict[str, object]:
    if kind == "read":
        return {"tool_id": "chaos:faults:get_item", "input": {"item_id": "I-1"}}
    key = f"bench-{run}-{n}"
    return {
        "tool_id": "chaos:faults:create_effect",
        "input": {"note": key},
        "constraints": {"idempotency_key": key},
    }


async def _load(
    deployment: ReplicaSet, kind: str, calls: int, callers: int, run: str
) -> tuple[list[float], int, float]:
    """`calls` calls from `callers` concurrent callers: latencies (ms), failures, wall seconds."""
    latencies: list[float] = []
    failed = 0
    failures: Counter[str] = Counter()
    numbers = iter(range(calls))
    connector = aiohttp.TCPConnector(limit=callers)
    async with aiohttp.ClientSession(headers=deployment.headers, connector=connector) as session:

        async def caller() -> None:
            nonlocal failed
            for n in numbers:
                started = time.perf_counter()
                try:
                    async with session.post(
                        f"{deployment.lb_url}/v1/calls", json=_request(kind, n, run)
                    ) as response:
                        body = await response.read()
                    answer = json.loads(body)
                except aiohttp.ClientError as exc:
                    answer = {"status": f"no answer: {type(exc).__name__}"}
                except ValueError:
                    answer = {"status": f"HTTP {response.status}: {body[:80]!r}"}
                latencies.append((time.perf_counter() - started) * 1000)
                if not isinstance(answer, dict) or answer.get("status") != "success":
                    failed += 1
                    failures[str((answer.get("error") or {}).get("code") or answer.get("status"))] += 1

        started = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(callers)))
        if failures:
            print(f"{kind} calls that failed, by outcome: {dict(failures)}", file=sys.stderr)
            print(
                f"HAProxy's log: {(deployment.folder / 'haproxy.log').read_text()[-2000:]}", file=sys.stderr
            )
        return latencies, failed, time.perf_counter() - started


def _cpu(pids: list[int]) -> float:
    return sum(cpu_seconds(pid) or 0.0 for pid in pids)


def measure(folder: Path, backend: tuple[str, int], replicas: int, calls: int, callers: int) -> list[Result]:
    url, backend_pid = backend
    contract = folder / "faults.yaml"
    contract.write_text(yaml.safe_dump(fault_contract(url), sort_keys=False), encoding="utf-8")
    results = []
    with running_replicas(folder / f"x{replicas}", POSTGRES, [contract], count=replicas) as deployment:
        gateway_pids = [r.proc.pid for r in deployment.replicas if r.proc is not None]
        asyncio.run(_load(deployment, "read", WARM_UP, callers, "warm"))
        idle_from = _cpu(gateway_pids)
        time.sleep(IDLE_S)
        idle_cores = (_cpu(gateway_pids) - idle_from) / IDLE_S
        for kind in ("read", "keyed"):
            run = uuid.uuid4().hex[:8]
            asyncio.run(_load(deployment, kind, WARM_UP, callers, f"warm-{run}"))
            before = (_cpu(gateway_pids), _cpu([deployment.haproxy.pid]), _cpu([backend_pid]))
            latencies, failed, seconds = asyncio.run(_load(deployment, kind, calls, callers, run))
            after = (_cpu(gateway_pids), _cpu([deployment.haproxy.pid]), _cpu([backend_pid]))
            gateway, haproxy, backend_cpu = (b - a for a, b in zip(before, after, strict=True))
            results.append(
                Result(
                    replicas,
                    kind,
                    calls,
                    failed,
                    seconds,
                    latencies,
                    gateway,
                    haproxy,
                    backend_cpu,
                    idle_cores,
                )
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000, help="measured calls per kind and deployment")
    parser.add_argument("--callers", type=int, default=32, help="concurrent callers")
    args = parser.parse_args()
    if find_haproxy() is None:
        raise SystemExit("HAProxy is not installed: `make haproxy` installs Debian's package (as root)")
    console = Console(width=160)
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as tmp:
        folder = Path(tmp)
        with fault_backend(folder) as backend:
            results = [
                *measure(folder, backend, 1, args.calls, args.callers),
                *measure(folder, backend, 3, args.calls, args.callers),
            ]
    table = Table(
        title=f"{args.calls} calls per row, {args.callers} callers, PostgreSQL, HAProxy round-robin"
    )
    for column in (
        "replicas", "kind", "failed", "gateway CPU µs/call", "of which the calls'", "idle CPU ms/s",
        "p50 ms", "p99 ms", "calls/s", "HAProxy µs/call", "backend µs/call",
    ):  # fmt: skip
        table.add_column(column, justify="left" if column == "kind" else "right")
    for result in results:
        table.add_row(
            str(result.replicas),
            result.kind,
            str(result.failed),
            f"{result.cpu_us_per_call:.0f}",
            f"{result.net_cpu_us_per_call:.0f}",
            f"{result.idle_cores * 1000:.0f}",
            f"{result.percentile(0.5):.1f}",
            f"{result.percentile(0.99):.1f}",
            f"{result.per_second:.0f}",
            f"{result.haproxy_cpu_s / result.calls * 1e6:.0f}",
            f"{result.backend_cpu_s / result.calls * 1e6:.0f}",
        )
    console.print(table)
    for kind in ("read", "keyed"):
        one, three = (r for r in results if r.kind == kind)
        cpu = three.net_cpu_us_per_call / one.net_cpu_us_per_call
        rate = three.per_second / one.per_second
        p99 = three.percentile(0.99) / one.percentile(0.99)
        console.print(
            f"{kind}: 3 replicas / 1 replica in this run: the calls' CPU per call x{cpu:.2f}, "
            f"calls/s x{rate:.2f}, p99 x{p99:.2f}"
        )
        cores = 1000 * three.net_cpu_us_per_call / 1e6
        idle = three.idle_cores / 3
        console.print(
            f"  1,000 {kind} calls/s need about {cores:.1f} cores of gateway CPU for the calls, plus "
            f"{idle * 1000:.0f} ms/s per replica idle"
        )
    console.print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
