"""Start the demo backend and a gateway as real processes on loopback, and time calls, for benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import yaml

ROOT = Path(__file__).resolve().parents[1]
Cost = tuple[float, float]
"""(CPU µs, wall µs) per unit of work."""
COLONNADE = Path(sys.executable).with_name("colonnade")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time a process has used so far (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Call = Callable[[], Awaitable[None]]


def wait_http(
    url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0, *, any_answer: bool = False
) -> None:
    """Until `url` answers 200 (any status below 500 with `any_answer`), or the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"a process exited ({proc.returncode}) before {url} answered")
        try:
            status = httpx2.get(url, timeout=1.0).status_code
            if status == 200 or (any_answer and status < 500):
                return
        except httpx2.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not answer within {timeout}s")


@contextlib.contextmanager
def echo_upstream() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`bench/echo_upstream.py` (one trivial `echo` tool, JSON answers) on a free port: the process and
    its MCP URL, until the block ends."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "echo_upstream.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(url, process, any_answer=True)
        yield process, url
    finally:
        process.terminate()
        process.wait(timeout=10)


async def sequential(call: Call, n: int) -> list[float]:
    """Milliseconds of `n` calls one after the other, after a warm-up of up to 50."""
    for _ in range(min(50, n)):
        await call()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


async def throughput(call: Call, workers: int, total: int) -> float:
    """Calls per second of `total` calls made by `workers` concurrent callers."""
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return total / (time.perf_counter() - t0)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class Stack:
    backend_url: str
    mcp_url: str
    backend_pid: int
    gateway_pid: int


def backend_command(port: int, database: Path) -> list[str]:
    """The demo backend on a loopback port, its data in `database` (run with cwd=ROOT)."""
    return [sys.executable, "-m", "examples.demo_backend", "--port", str(port), "--db", str(database)]


def demo_contracts(folder: Path, backend_url: str) -> list[str]:
    """The demo contracts, written into `folder` with their backend at `backend_url`; their paths."""
    paths = []
    for src in sorted((ROOT / "examples" / "contracts").glob("*.yaml")):
        data = yaml.safe_load(src.read_text())
        data["backend"]["base_url"] = backend_url
        (folder / src.name).write_text(yaml.safe_dump(data, sort_keys=False))
        paths.append(str(folder / src.name))
    return paths


def gateway_process(
    home: Path,
    port: int,
    contracts: list[str],
    logs: contextlib.ExitStack,
    settings: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """`colonnade serve` on a loopback port, its data and log (`gateway.log`) in `home`; `settings`
    are extra environment variables (COLONNADE_* settings, or PYTHONPATH for another source tree).
    Not waited for: the caller keeps the process for clean-up first, then waits for `/readyz`."""
    env = {
        **os.environ,
        "COLONNADE_DATA_DIR": str(home / "data"),
        "COLONNADE_CONTRACTS": json.dumps(contracts),
        **(settings or {}),
    }
    return subprocess.Popen(
        [str(COLONNADE), "serve", "--port", str(port)],
        cwd=home,
        env=env,
        stdout=logs.enter_context((home / "gateway.log").open("wb")),
        stderr=subprocess.STDOUT,
    )


@contextlib.contextmanager
def demo_stack(settings: dict[str, str] | None = None) -> Iterator[Stack]:
    """The demo backend and a gateway; `settings` are extra COLONNADE_* variables for the gateway."""
    with tempfile.TemporaryDirectory(prefix="colonnade-bench-") as tmp_name, contextlib.ExitStack() as logs:
        tmp = Path(tmp_name)
        backend_port, gateway_port = free_port(), free_port()
        backend_url = f"http://127.0.0.1:{backend_port}"
        procs: list[subprocess.Popen[bytes]] = []
        try:
            procs.append(
                subprocess.Popen(
                    backend_command(backend_port, tmp / "d.db"),
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    stdout=logs.enter_context((tmp / "backend.log").open("wb")),
                    stderr=subprocess.STDOUT,
                )
            )
            wait_http(f"{backend_url}/healthz", procs[-1])
            contracts = demo_contracts(tmp, backend_url)
            # the gateway logs one line per call: to a file, not the terminal
            procs.append(gateway_process(tmp, gateway_port, contracts, logs, settings))
            wait_http(f"http://127.0.0.1:{gateway_port}/readyz", procs[-1])
            yield Stack(backend_url, f"http://127.0.0.1:{gateway_port}/mcp", procs[0].pid, procs[1].pid)
        finally:
            stop_all(procs)


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """Stop the processes, last started first; one still stopping after 10 s (e.g. thousands of
    sessions to close) is killed, so a benchmark leaves nothing behind."""
    for proc in reversed(procs):
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def cost_rounds(
    work: Callable[[int], Awaitable[None]], n: int, rounds: int, *, warm_up: int = 500
) -> Cost:
    """Median over `rounds` of CPU and wall microseconds per unit of `work(n)`, after a warm-up."""
    await work(min(n, warm_up))
    costs = []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        await work(n)
        costs.append(((time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6))
    return statistics.median(c[0] for c in costs), statistics.median(c[1] for c in costs)
