"""Why a longer search suffers far more on a saturated machine: fixed CPU work beside busy neighbours.

Each item is a spin of a fixed amount of this thread's CPU time (no memory traffic, no threads,
no native calls), timed back to back as `routing_scale.py` times searches, or with a pause
before each (`--gap`, as requests arriving one by one). Beside N busy-loop processes
(`routing_scale.neighbours`), items shorter than about one scheduler time slice mostly finish
before the scheduler switches away, so their wall time stays their CPU time; longer ones are
switched out in the middle and wait for the neighbours' slices, so their median jumps by tens of
milliseconds. A search's latency under contention therefore depends on whether its CPU fits in
a slice, far more than on its CPU alone.

Run: nice -n 5 .venv/bin/python bench/routing_contention.py [--busy 2] [--gap 0] [--work 0.25 0.5 1 1.5 2 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from routing_scale import neighbours

console = Console(width=None if sys.stdout.isatty() else 120)


def spin(ms: float) -> None:
    """Burn `ms` of this thread's CPU time."""
    end = time.thread_time() + ms / 1000
    while time.thread_time() < end:
        pass


def timed(ms: float, items: int, gap_ms: float) -> tuple[float, float, float]:
    """Median wall, median CPU and p90 wall (ms) of `items` spins of `ms`."""
    wall, cpu = [], []
    for _ in range(items):
        if gap_ms:
            time.sleep(gap_ms / 1000)
        started, started_cpu = time.perf_counter(), time.thread_time()
        spin(ms)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu), statistics.quantiles(wall, n=10)[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--busy", type=int, default=2, help="busy-loop neighbours (default 2)")
    parser.add_argument("--busy-nice", type=int, default=0, help="their niceness (default 0)")
    parser.add_argument("--gap", type=float, default=0.0, help="ms of sleep before each item (default 0)")
    parser.add_argument("--items", type=int, default=200, help="items per work size (default 200)")
    parser.add_argument("--work", type=float, nargs="+", default=[0.25, 0.5, 1.0, 1.5, 2.0, 3.0])
    args = parser.parse_args(argv)
    table = Table(
        title=f"fixed CPU work beside {args.busy} busy loops at nice {args.busy_nice} "
        f"(this process: nice {os.getpriority(os.PRIO_PROCESS, 0)}, gap {args.gap:g} ms)"
    )
    for column in ("work ms", "wall median ms", "cpu median ms", "wall p90 ms"):
        table.add_column(column, justify="right")
    with neighbours(args.busy, args.busy_nice):
        for ms in args.work:
            table.add_row(f"{ms:g}", *(f"{value:.2f}" for value in timed(ms, args.items, args.gap)))
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
