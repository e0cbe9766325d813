"""Tool-retrieval quality on the public dev splits: Recall@1/5/10, nDCG@10, Complete@10, latency.

Three modes:
  score a ranking file written by `colonnade route rank` (one `{"id", "ranked"}` line per query):
    .venv/bin/python bench/routing_eval.py --set seal-tools --rankings ranks.jsonl
  rank in-process with `ToolIndex` (default parameters), every set, with median/p95 ms per query:
    .venv/bin/python bench/routing_eval.py --direct
  grid-search the few shared parameters of `routing/tuned.py` on the dev splits:
    .venv/bin/python bench/routing_eval.py --tune

With --rankings, `--bootstrap N` also estimates how likely a held-out split of `--sample-size`
queries drawn like the dev queries meets the issue's targets (N resamples with replacement):
    .venv/bin/python bench/routing_eval.py --set livemcpbench --rankings r.jsonl --bootstrap 5000 \
        --sample-size 67

Benchmarks are read from `--benchmarks` (default: `../shared/benchmarks` beside the repository).
Only dev splits exist there; never tune on anything else.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from colonnade.routing import FusionWeights, IndexConfig, ToolIndex
from colonnade.routing.benchmark import (
    BenchmarkError,
    BenchmarkQuery,
    Scores,
    load_queries,
    load_rankings,
    load_tools,
    score_rankings,
)

DEFAULT_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SETS = ("seal-tools", "livemcpbench")
# The router issue's targets on the held-out splits: (metric, minimum) per set.
TARGETS: dict[str, tuple[tuple[str, float], ...]] = {
    "seal-tools": (("recall_at_5", 0.80), ("ndcg_at_10", 0.84)),
    "livemcpbench": (("recall_at_10", 0.55), ("ndcg_at_10", 0.45)),
}
console = Console(width=None if sys.stdout.isatty() else 140)


@dataclass(frozen=True)
class Run:
    name: str
    scores: Scores
    median_ms: float | None = None
    p95_ms: float | None = None
    build_s: float | None = None


@dataclass
class Loaded:
    index: ToolIndex
    queries: list[BenchmarkQuery]
    build_s: float


def load_set(root: Path, name: str, config: IndexConfig | None = None) -> Loaded:
    started = time.perf_counter()
    index = ToolIndex(config)
    index.upsert(load_tools(root / name / "tools.jsonl"))
    index.compact()
    build_s = time.perf_counter() - started
    return Loaded(index, load_queries(root / name / "queries.dev.jsonl"), build_s)


def rank_direct(loaded: Loaded, k: int) -> tuple[dict[str, list[str]], list[float]]:
    """Rankings and per-query latencies (ms) of every dev query, searched one at a time."""
    rankings: dict[str, list[str]] = {}
    latencies: list[float] = []
    for query in loaded.queries:
        started = time.perf_counter()
        hits = loaded.index.search(query.query, k)
        latencies.append((time.perf_counter() - started) * 1000)
        rankings[query.id] = [hit.id for hit in hits]
    return rankings, latencies


def direct(root: Path, names: list[str], k: int) -> list[Run]:
    runs = []
    for name in names:
        loaded = load_set(root, name)
        rank_direct(loaded, k)  # warm caches so the timed pass measures steady state
        rankings, latencies = rank_direct(loaded, k)
        p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
        runs.append(
            Run(
                name,
                score_rankings(loaded.queries, rankings),
                statistics.median(latencies),
                p95,
                loaded.build_s,
            )
        )
    return runs


# The tuning grid: few parameters, shared by both sets (see routing/tuned.py).
GRID = {
    "k1": (1.2, 2.0, 2.5),
    "name_weight": (2.0, 3.0, 4.0),
    "server_weight": (0.5, 1.0, 1.5),
    "clause": (1.0, 1.5, 2.0, 3.0),
    "synonym_weight": (0.0, 0.3, 0.5),
}


def _config(base: IndexConfig, k1: float, name_weight: float, server_weight: float, clause: float,
            synonym_weight: float) -> IndexConfig:  # fmt: skip
    weights = list(base.field_weights)
    weights[0], weights[4] = name_weight, server_weight
    return replace(
        base,
        k1=k1,
        field_weights=tuple(weights),
        fusion=FusionWeights(query=base.fusion.query, clause=clause),
        synonym_weight=synonym_weight,
    )


def tune(root: Path, names: list[str], k: int, top: int) -> None:
    """Score every grid point on every set; objective: the mean of the sets' nDCG@10."""
    base = IndexConfig()
    sets = {name: load_set(root, name) for name in names}
    points = list(itertools.product(*GRID.values()))
    results: list[tuple[float, tuple[float, ...], dict[str, Scores]]] = []
    with console.status("tuning") as status:
        for i, point in enumerate(points, start=1):
            status.update(f"tuning: grid point {i}/{len(points)}")
            config = _config(base, *point)
            scores: dict[str, Scores] = {}
            for name, loaded in sets.items():
                loaded.index.configure(config)
                rankings, _ = rank_direct(loaded, k)
                scores[name] = score_rankings(loaded.queries, rankings)
            objective = statistics.fmean(s.ndcg_at_10 for s in scores.values())
            results.append((objective, point, scores))
    results.sort(key=lambda r: -r[0])
    table = Table(title=f"best {top} of {len(points)} grid points (objective: mean nDCG@10)")
    for column in (*GRID, "objective", *(f"{n} R@5/R@10/nDCG" for n in names)):
        table.add_column(column, justify="right")
    for objective, point, scores in results[:top]:
        cells = [f"{v:g}" for v in point] + [f"{100 * objective:.1f}"]
        cells += [_triple(scores[n]) for n in names]
        table.add_row(*cells)
    console.print(table)
    best = dict(zip(GRID, results[0][1], strict=True))
    console.print(f"best: {best}  (copy into src/colonnade/routing/tuned.py)")


def _triple(s: Scores) -> str:
    return f"{100 * s.recall_at_5:.1f}/{100 * s.recall_at_10:.1f}/{100 * s.ndcg_at_10:.1f}"


def _metrics(s: Scores) -> tuple[float, ...]:
    return s.recall_at_1, s.recall_at_5, s.recall_at_10, s.ndcg_at_10, s.complete_at_10


def print_runs(runs: list[Run], title: str) -> None:
    table = Table(title=title)
    for column in ("set", "queries", "R@1", "R@5", "R@10", "nDCG@10", "Complete@10", "median ms", "p95 ms",
                   "build s"):  # fmt: skip
        table.add_column(column, justify="right")
    for run in runs:
        s = run.scores
        table.add_row(
            run.name,
            str(s.queries),
            *(f"{100 * v:.1f}" for v in _metrics(s)),
            *("-" if v is None else f"{v:.2f}" for v in (run.median_ms, run.p95_ms, run.build_s)),
        )
    console.print(table)


def bootstrap(
    name: str, queries: list[BenchmarkQuery], rankings: dict[str, list[str]], samples: int, size: int
) -> None:
    """P(target met) over `samples` resamples of `size` queries drawn with replacement from dev."""
    per_query = [score_rankings([query], rankings) for query in queries]
    targets = TARGETS[name]
    met = [0] * len(targets)
    met_all = 0
    draw = random.Random(20261123)
    for _ in range(samples):
        sample = draw.choices(per_query, k=size)
        ok = [statistics.fmean(getattr(s, metric) for s in sample) >= floor for metric, floor in targets]
        met = [m + o for m, o in zip(met, ok, strict=True)]
        met_all += all(ok)
    table = Table(title=f"{name}: {samples} resamples of {size} queries from {len(queries)} dev queries")
    table.add_column("target")
    table.add_column("P(met)", justify="right")
    for (metric, floor), count in zip(targets, met, strict=True):
        table.add_row(f"{metric} >= {100 * floor:.0f}", f"{count / samples:.2f}")
    table.add_row("all of them", f"{met_all / samples:.2f}")
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--rankings", type=Path, help="score this ranking file (needs --set or --queries)")
    mode.add_argument("--direct", action="store_true", help="rank in-process with ToolIndex")
    mode.add_argument("--tune", action="store_true", help="grid-search the shared parameters on dev")
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="benchmarks directory")
    parser.add_argument(
        "--set", dest="sets", action="append", choices=SETS, help="benchmark set (repeatable)"
    )
    parser.add_argument("--queries", type=Path, help="queries for --rankings (default: the set's dev split)")
    parser.add_argument("--k", type=int, default=10, help="results per query (default 10)")
    parser.add_argument("--top", type=int, default=10, help="grid points shown by --tune (default 10)")
    parser.add_argument("--bootstrap", type=int, default=0, help="with --rankings: resamples (default off)")
    parser.add_argument(
        "--sample-size", type=int, help="queries per resample (default: as many as the dev split)"
    )
    args = parser.parse_args(argv)
    names = args.sets or list(SETS)
    try:
        if args.rankings is not None:
            if args.queries is None and len(names) != 1:
                parser.error("--rankings needs exactly one --set, or --queries")
            queries_path = args.queries or args.benchmarks / names[0] / "queries.dev.jsonl"
            queries, rankings = load_queries(queries_path), load_rankings(args.rankings)
            print_runs(
                [Run(str(args.rankings), score_rankings(queries, rankings))], f"rankings vs {queries_path}"
            )
            if args.bootstrap > 0:
                if len(names) != 1:
                    parser.error("--bootstrap needs exactly one --set (its targets)")
                bootstrap(names[0], queries, rankings, args.bootstrap, args.sample_size or len(queries))
        elif args.direct:
            print_runs(direct(args.benchmarks, names, args.k), "ToolIndex on the dev splits")
        else:
            tune(args.benchmarks, names, args.k, args.top)
    except BenchmarkError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
