"""How the retrieval index's costs grow with the catalog: 1k, 4k, 10k and 100k tools, dense on and off.

Synthetic catalogs are built from the benchmark tools (Seal-Tools and LiveMCPBench): each copy
of a tool gets a qualifier word in its name, a server of its own and half a sentence from another
tool's description, so names and texts vary the way a large real catalog's do. For each size it
prints build time, on-disk size and load time of the saved index, memory of a loaded index
(tracemalloc, after one query), median and p99 query latency over the dev queries, and the cost
of publishing / removing one tool. Sizes in `--sizes` run with the dense signal off, sizes in
`--dense-sizes` with it on (needs `pip install colonnade[dense]`): the issue's budgets are a
median under 5 ms with dense on at 4,000 tools and under 10 ms with dense off at 100,000. Run it
with `nice -n 5` on a shared machine, and compare sizes within one run.

`--busy N` times the queries a second time while N busy-loop processes (at `--busy-nice`, default
0: an ordinary process) compete for the cores: a controlled form of a saturated machine. Both
the wall time and the searching thread's own CPU time are shown, quiet and busy: CPU that stays
put while the wall time grows is time spent waiting for a core, not searching. `--gap MS` pauses
before each timed search, as when requests arrive one by one (the default times them back to back).

Run: .venv/bin/python bench/routing_scale.py [--sizes 1000 4000 10000 100000] [--dense-sizes 1000 4000 10000]
     [--busy 2 [--busy-nice 0]] [--gap 5]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from colonnade.routing import IndexConfig, ToolDoc, ToolIndex
from colonnade.routing.benchmark import BenchmarkError, load_queries, load_tools
from colonnade.routing.dense import load_embedder

DEFAULT_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SETS = ("seal-tools", "livemcpbench")
QUALIFIERS = (
    "batch", "bulk", "legacy", "async", "secure", "fast", "cached", "remote", "local", "beta", "admin",
    "public", "internal", "regional", "global", "daily", "live", "archived", "scheduled", "draft", "v2",
    "v3", "lite", "pro", "team", "org", "user", "partner", "sandbox", "preview",
)  # fmt: skip
# A neighbour: one core's worth of pure CPU (no memory traffic) at a given niceness (a lower one
# than its parent's needs privilege; refused, it keeps the parent's).
BUSY_LOOP = """
import os
try:
    os.setpriority(os.PRIO_PROCESS, 0, {nice})
except OSError:
    pass
while True:
    pass
"""
console = Console(width=None if sys.stdout.isatty() else 220)


def synthetic_catalog(pool: list[ToolDoc], size: int, seed: int = 20250611) -> list[ToolDoc]:
    """`size` distinct documents derived from `pool` (the first len(pool) are the originals)."""
    rng = random.Random(seed)
    docs: list[ToolDoc] = []
    for i in range(size):
        base = pool[i % len(pool)]
        copy = i // len(pool)
        if copy == 0:
            docs.append(base)
            continue
        qualifier = QUALIFIERS[(i + copy) % len(QUALIFIERS)]
        other = pool[rng.randrange(len(pool))].description
        docs.append(
            replace(
                base,
                id=f"{base.id}#{copy}",
                name=f"{base.name}_{qualifier}",
                server=f"{base.server}-{copy}",
                description=f"{base.description} {other[: len(other) // 2]}",
            )
        )
    return docs


@contextlib.contextmanager
def neighbours(count: int, nice: int) -> Iterator[None]:
    """`count` busy-loop processes at niceness `nice` while the block runs (none for 0)."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP.format(nice=nice)]) for _ in range(count)]
    try:
        time.sleep(0.3 if procs else 0)  # let them start spinning
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def time_queries(
    index: ToolIndex, queries: list[str], gap_ms: float = 0.0
) -> tuple[list[float], list[float], list[float]]:
    """Wall, thread-CPU and process-CPU milliseconds of each search (process CPU above the
    thread's is work done by helper threads: a BLAS or tokenizer pool), each search after a
    pause of `gap_ms` (requests arriving one by one) or back to back."""
    latencies, cpu, process = [], [], []
    for query in queries:
        if gap_ms:
            time.sleep(gap_ms / 1000)
        started, started_cpu, started_process = time.perf_counter(), time.thread_time(), time.process_time()
        index.search(query)
        latencies.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        process.append((time.process_time() - started_process) * 1000)
    return latencies, cpu, process


def _timings(latencies: list[float], cpu: list[float], process: list[float]) -> list[str]:
    return [
        f"{statistics.median(latencies):.2f}",
        f"{statistics.quantiles(latencies, n=100)[-1]:.2f}",
        f"{statistics.median(cpu):.2f}",
        f"{statistics.fmean(process) - statistics.fmean(cpu):.2f}",
    ]


def measure(
    docs: list[ToolDoc],
    queries: list[str],
    workdir: Path,
    dense: bool,
    busy: int = 0,
    busy_nice: int = 0,
    gap_ms: float = 0.0,
) -> list[str]:
    gc.collect()
    started = time.perf_counter()
    config = IndexConfig(dense=dense)
    index = ToolIndex(config)
    index.upsert(docs)
    index.compact()
    build_s = time.perf_counter() - started

    path = workdir / f"index-{len(docs)}.npz"
    index.save(path)
    loads = []
    for _ in range(3):
        started = time.perf_counter()
        ToolIndex.load(path, config)
        loads.append(time.perf_counter() - started)
    # Memory of a loaded index after two queries (its caches filled), traced apart from the timings.
    gc.collect()
    tracemalloc.start()
    loaded = ToolIndex.load(path, config)
    loaded.search(queries[0])
    loaded.search(queries[1])
    memory_mb = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()
    del loaded

    for query in queries[:20]:
        index.search(query)
    timings = _timings(*time_queries(index, queries, gap_ms))
    if busy:
        with neighbours(busy, busy_nice):
            timings += _timings(*time_queries(index, queries, gap_ms))

    publish, remove = [], []
    for doc in docs[:50]:
        started = time.perf_counter()
        index.remove([doc.id])
        remove.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        index.upsert([doc])
        publish.append((time.perf_counter() - started) * 1000)
    after_ms = []
    for query in queries[:2]:
        started = time.perf_counter()
        index.search(query)
        after_ms.append((time.perf_counter() - started) * 1000)

    return [
        f"{len(docs):,}",
        "on" if index.dense_active else "off",
        f"{build_s:.2f}",
        f"{path.stat().st_size / 2**20:.1f}",
        f"{statistics.median(loads) * 1000:.0f}",
        f"{memory_mb:.1f}",
        *timings,
        f"{statistics.median(publish):.2f}",
        f"{statistics.median(remove):.3f}",
        f"{after_ms[0]:.2f}",
        f"{after_ms[1]:.2f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="benchmarks directory")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[1_000, 4_000, 10_000, 100_000], help="sizes, dense off"
    )
    parser.add_argument(
        "--dense-sizes", type=int, nargs="*", default=[1_000, 4_000, 10_000], help="sizes, dense on"
    )
    parser.add_argument("--queries", type=int, default=300, help="queries timed per size (default 300)")
    parser.add_argument("--busy", type=int, default=0, help="also time with N busy-loop neighbour processes")
    parser.add_argument("--busy-nice", type=int, default=0, help="their niceness (default 0)")
    parser.add_argument("--gap", type=float, default=0.0, help="ms of pause before each timed search")
    args = parser.parse_args(argv)
    try:
        pool = [doc for name in SETS for doc in load_tools(args.benchmarks / name / "tools.jsonl")]
        texts = [q.query for name in SETS for q in load_queries(args.benchmarks / name / "queries.dev.jsonl")]
    except BenchmarkError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    queries = random.Random(7).sample(texts, min(args.queries, len(texts)))
    table = Table(title=f"ToolIndex at scale ({len(queries)} dev queries timed per size)")
    busy = (
        ("busy median ms", "busy p99 ms", "busy cpu median ms", "busy other threads ms") if args.busy else ()
    )
    columns = ("tools", "dense", "build s", "file MiB", "load ms", "memory MiB", "median ms", "p99 ms",
               "cpu median ms", "other threads ms", *busy, "publish 1 ms", "remove 1 ms", "1st search after",
               "2nd search after")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as tmp, console.status("measuring") as status:
        runs = [(size, False) for size in args.sizes]
        if load_embedder() is not None:
            runs += [(size, True) for size in args.dense_sizes]
        elif args.dense_sizes:
            console.print("dense sizes skipped: no dense model installed (pip install colonnade[dense])")
        for size, dense in sorted(runs):
            status.update(f"measuring {size:,} tools, dense {'on' if dense else 'off'}")
            docs = synthetic_catalog(pool, size)
            table.add_row(*measure(docs, queries, Path(tmp), dense, args.busy, args.busy_nice, args.gap))
    console.print(table)
    if args.busy:
        console.print(
            f"busy: timed again beside {args.busy} busy-loop processes at nice {args.busy_nice} "
            f"(this process: nice {os.getpriority(os.PRIO_PROCESS, 0)}, {os.cpu_count()} cores)."
        )
    console.print(
        "median/p99: wall time per search; cpu median: the searching thread's own CPU (on a busy machine "
        "the wall time also holds the time the search waited for a core); other threads: mean CPU per "
        "search of the process's other threads (a BLAS or tokenizer pool; 0 when none works). "
        "publish/remove: one `upsert`/`remove` call on the built index (delta segment, no rebuild). "
        "After 50 such changes the 1st search scores only its own postings (and indexes the delta); "
        "the 2nd, statistics unchanged since, refreshes the per-posting cache every later query reads."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
