"""Tool-retrieval quality on the public dev splits: Recall@1/5/10, nDCG@10, Complete@10, latency.

Three modes:
  score a ranking file written by `colonnade route rank` (one `{"id", "ranked"}` line per query):
    .venv/bin/python bench/routing_eval.py --set seal-tools --rankings ranks.jsonl
  rank in-process with `ToolIndex` (default parameters; `--router`: with the gateway's `Router`,
  as `colonnade route rank` does), every set, with 95% bootstrap intervals and median/p95 ms:
    .venv/bin/python bench/routing_eval.py --direct [--router]
  tune the parameters of `routing/tuned.py`, and say which are worth tuning:
    .venv/bin/python bench/routing_eval.py --tune [--synthetic 300] [--folds 5 --repeats 4]

--tune scores a grid of lexical parameters, rules and fusion weights, prints the best points
in-sample (what `tuned.py` holds), then k-fold cross-validates the *tuning procedure*: the
queries of each dev split are cut into k folds, the grid point with the best mean nDCG@10 over
the other folds is chosen (with the synthetic requests of `routing_synth.py` added to every
training side when `--synthetic N`), and it scores the held-back fold; each query is scored once
per shuffling, averaged over `--repeats` shufflings. That figure, with a bootstrap interval over
queries, is what a change must improve. The same is done with each parameter held at its neutral
value (a rule off, a signal's weight 0): a parameter whose neutral value cross-validates as well
is fitted noise, and is dropped.

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
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from colonnade.config import RoutingSettings
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
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.dense import load_embedder
from colonnade.routing.router import Router

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
    per_query: np.ndarray | None = None  # (queries, 3): Recall@5, Recall@10, nDCG@10


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


def rank_direct(
    loaded: Loaded, k: int, router: Router | None = None
) -> tuple[dict[str, list[str]], list[float]]:
    """Rankings and per-query latencies (ms) of every dev query, searched one at a time."""
    rankings: dict[str, list[str]] = {}
    latencies: list[float] = []
    for query in loaded.queries:
        started = time.perf_counter()
        if router is None:
            ranked = [hit.id for hit in loaded.index.search(query.query, k)]
        else:
            ranked = router.route(query.query, k=k).selected
        latencies.append((time.perf_counter() - started) * 1000)
        rankings[query.id] = ranked
    return rankings, latencies


def direct(root: Path, names: list[str], k: int, use_router: bool = False) -> list[Run]:
    runs = []
    for name in names:
        loaded = load_set(root, name)
        router = None
        if use_router:
            corpus = ToolCorpus(loaded.index)
            corpus.register(load_tools(root / name / "tools.jsonl"))
            router = Router.from_settings(RoutingSettings(), corpus)
        rank_direct(loaded, k, router)  # warm caches so the timed pass measures steady state
        rankings, latencies = rank_direct(loaded, k, router)
        p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
        per_query = np.array(
            [_triple_of(score_rankings([q], rankings)) for q in loaded.queries], dtype=np.float64
        )
        runs.append(
            Run(
                name,
                score_rankings(loaded.queries, rankings),
                statistics.median(latencies),
                p95,
                loaded.build_s,
                per_query,
            )
        )
    return runs


def _triple_of(s: Scores) -> tuple[float, float, float]:
    return s.recall_at_5, s.recall_at_10, s.ndcg_at_10


# The tuning grid. Lexical parameters change the index's scores, so each of their points is one
# pass over the queries; fusion weights only re-weigh the signals of a pass (`ToolIndex.signals`).
LEXICAL_GRID: dict[str, tuple[Any, ...]] = {
    "k1": (1.2, 2.0),
    "name_weight": (2.0, 3.0),
    "synonym_weight": (0.0, 0.3),
    "write_rule": (False, True),
}
FUSION_GRID: dict[str, tuple[float, ...]] = {
    "clause": (1.0, 2.0, 3.0),
    "dense": (0.0, 0.25, 0.5, 1.0, 1.5),
    "domain": (0.0, 0.25, 0.5),
}
PARAMETERS = (*LEXICAL_GRID, *FUSION_GRID)
# The value that switches each rule or signal off (or, for plain weights, a neutral one).
NEUTRAL: dict[str, Any] = {
    "k1": 1.2, "name_weight": 2.0, "synonym_weight": 0.0, "write_rule": False,
    "clause": 1.0, "dense": 0.0, "domain": 0.0,
}  # fmt: skip
# The procedure before issue 17: lexical parameters and the clause weight, the write rule on.
BEFORE: dict[str, tuple[Any, ...]] = {"write_rule": (True,), "dense": (0.0,), "domain": (0.0,)}
# The procedure behind routing/tuned.py: what did not cross-validate better than a fixed value is
# fixed (k1 and the name weight at their earlier values, the thesaurus and the domain signal off),
# the write rule kept, the dense weight fixed at the best of its cross-validated curve, and only
# the clause weight tuned.
SHIPPED: dict[str, tuple[Any, ...]] = {
    "k1": (2.0,), "name_weight": (3.0,), "synonym_weight": (0.0,), "write_rule": (True,),
    "dense": (0.25,), "domain": (0.0,),
}  # fmt: skip
# The same with the dense and domain weights left free: their curves are printed from it.
SHIPPED_FREE = {k: v for k, v in SHIPPED.items() if k not in ("dense", "domain")}
METRICS = ("recall_at_5", "recall_at_10", "ndcg_at_10")
Point = tuple[Any, ...]


def _config(base: IndexConfig, point: dict[str, Any]) -> IndexConfig:
    weights = list(base.field_weights)
    weights[0] = point.get("name_weight", weights[0])
    fusion = FusionWeights(
        query=base.fusion.query,
        clause=point.get("clause", base.fusion.clause),
        dense=point.get("dense", base.fusion.dense),
        domain=point.get("domain", base.fusion.domain),
    )
    return replace(
        base,
        k1=point.get("k1", base.k1),
        field_weights=tuple(weights),
        fusion=fusion,
        synonym_weight=point.get("synonym_weight", base.synonym_weight),
        write_rule=point.get("write_rule", base.write_rule),
    )


def _per_query(queries: list[BenchmarkQuery], gold: list[np.ndarray], scores: np.ndarray) -> np.ndarray:
    """Recall@5, Recall@10 and nDCG@10 of each query (rows of `scores`), as a (queries, 3) array.

    `gold[q]` numbers each row by the gold group of query q it belongs to (-1: none). Ties are
    broken by row, where the index breaks them by id: a difference only between equal scores.
    """
    n = scores.shape[1]
    top = np.argpartition(-scores, min(10, n - 1), axis=1)[:, :10]
    order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
    top = np.take_along_axis(top, order, axis=1)
    discount = 1.0 / np.log2(np.arange(2, 12))
    out = np.zeros((len(queries), 3))
    for q, query in enumerate(queries):
        groups = gold[q][top[q]]
        seen: set[int] = set()
        r5 = r10 = dcg = 0.0
        for position, group in enumerate(groups.tolist()):
            if group >= 0 and group not in seen:
                seen.add(group)
                r10 += 1
                r5 += position < 5
                dcg += discount[position]
        size = len(query.groups)
        out[q] = (r5 / size, r10 / size, dcg / discount[: min(size, 10)].sum())
    return out


def _gold_rows(queries: list[BenchmarkQuery], ids: list[str]) -> list[np.ndarray]:
    row_of = {tool_id: row for row, tool_id in enumerate(ids)}
    gold = []
    for query in queries:
        numbers = np.full(len(ids), -1, dtype=np.int64)
        for g, group in enumerate(query.groups):
            for tool_id in group:
                if tool_id in row_of and numbers[row_of[tool_id]] < 0:
                    numbers[row_of[tool_id]] = g
        gold.append(numbers)
    return gold


def grid_scores(
    sets: dict[str, Loaded], status: Any
) -> tuple[list[Point], dict[Point, dict[str, np.ndarray]]]:
    """Per grid point and set, the (queries, 3) array of per-query metrics."""
    base = IndexConfig()
    lexical_points = list(itertools.product(*LEXICAL_GRID.values()))
    fusion_points = list(itertools.product(*FUSION_GRID.values()))
    results: dict[Point, dict[str, np.ndarray]] = {}
    for i, lexical in enumerate(lexical_points, start=1):
        config = _config(base, dict(zip(LEXICAL_GRID, lexical, strict=True)))
        for name, loaded in sets.items():
            status.update(f"tuning: lexical point {i}/{len(lexical_points)}, {name}")
            loaded.index.configure(config)
            rows = [loaded.index.signals(q.query) for q in loaded.queries]
            gold = _gold_rows(loaded.queries, rows[0][0])
            stacked = {
                field: np.stack([_signal(getattr(sig, field), sig.lexical) for _, sig in rows])
                for field in ("lexical", "clause", "dense", "domain")
            }
            # A one-clause request has no clause signal (zeros here); `fuse` leaves its weight out of
            # the sum it divides by, which changes no ranking within a query.
            for fusion in fusion_points:
                clause, dense, domain = fusion
                total = stacked["lexical"] + clause * stacked["clause"]
                if dense:
                    total = total + dense * stacked["dense"]
                if domain:
                    total = total + domain * stacked["domain"]
                results.setdefault((*lexical, *fusion), {})[name] = _per_query(loaded.queries, gold, total)
    return list(results), results


def _signal(values: np.ndarray | None, like: np.ndarray) -> np.ndarray:
    return np.zeros_like(like) if values is None else values


def _best(points: list[Point], results: dict[Point, dict[str, np.ndarray]],
          train: dict[str, np.ndarray]) -> Point:  # fmt: skip
    """The point with the best mean over sets of nDCG@10 on the `train` queries of each set."""

    def objective(point: Point) -> float:
        return statistics.fmean(float(results[point][n][train[n], 2].mean()) for n in train)

    return max(points, key=objective)


def cross_validate(
    points: list[Point], results: dict[Point, dict[str, np.ndarray]], dev: list[str], always: list[str],
    folds: int, repeats: int,
) -> dict[str, np.ndarray]:  # fmt: skip
    """Per dev set, each query's metrics when scored by the point chosen on the other folds.

    Sets in `always` (synthetic) are in every training fold and never scored. The per-query figure
    is the mean over `repeats` shufflings.
    """
    out = {name: np.zeros_like(results[points[0]][name]) for name in dev}
    for repeat in range(repeats):
        draw = random.Random(1000 + repeat)
        assignment = {}
        for name in dev:
            order = list(range(len(results[points[0]][name])))
            draw.shuffle(order)
            assignment[name] = np.array([order.index(q) % folds for q in range(len(order))])
        for fold in range(folds):
            train = {name: assignment[name] != fold for name in dev}
            train |= {name: np.ones(len(results[points[0]][name]), dtype=bool) for name in always}
            chosen = _best(points, results, train)
            for name in dev:
                held = assignment[name] == fold
                out[name][held] += results[chosen][name][held] / repeats
    return out


def interval(values: np.ndarray, samples: int = 2000, seed: int = 20261124) -> tuple[float, float]:
    """95% bootstrap interval of the mean of `values` (resampling queries)."""
    draw = np.random.default_rng(seed)
    means = values[draw.integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def _restricted(points: list[Point], fixed: dict[str, tuple[Any, ...]]) -> list[Point]:
    return [p for p in points if all(p[PARAMETERS.index(k)] in v for k, v in fixed.items())]


def tune(root: Path, names: list[str], top: int, synthetic: int, folds: int, repeats: int) -> None:
    """Grid scores, the in-sample best point, and cross-validated figures of the tuning procedure:
    all parameters tuned, the procedure before issue 17, and each parameter held at its neutral value."""
    sets = {name: load_set(root, name) for name in names}
    always: list[str] = []
    if synthetic:
        from routing_synth import synthetic_queries

        source = "livemcpbench" if "livemcpbench" in sets else names[0]
        loaded = load_set(root, source)
        loaded.queries = synthetic_queries(load_tools(root / source / "tools.jsonl"), synthetic)
        sets["synthetic"] = loaded
        always.append("synthetic")
    with console.status("tuning") as status:
        points, results = grid_scores(sets, status)
    everything = {name: np.ones(len(results[points[0]][name]), dtype=bool) for name in sets}
    ranked = sorted(points, key=lambda p: -statistics.fmean(results[p][n][:, 2].mean() for n in sets))
    objective = f"mean nDCG@10 of {', '.join(sets)}"
    title = f"best {top} of {len(points)} grid points in-sample (objective: {objective})"
    table = Table(title=title)
    for column in (*PARAMETERS, *(f"{n} R@5/R@10/nDCG" for n in sets)):
        table.add_column(column, justify="right")
    for point in ranked[:top]:
        cells = [f"{v:g}" if not isinstance(v, bool) else str(v) for v in point]
        table.add_row(*cells, *(_cells(results[point][n].mean(axis=0)) for n in sets))
    console.print(table)
    best = _best(points, results, everything)
    console.print(f"in-sample best: {dict(zip(PARAMETERS, best, strict=True))}  (routing/tuned.py)")

    dev = list(names)
    free = _restricted(points, SHIPPED_FREE)
    variants: list[tuple[str, list[Point]]] = [
        ("all parameters tuned", points),
        ("before issue 17 (no dense, no domain, write rule on)", _restricted(points, BEFORE)),
        ("shipped (k1 2, name 3, synonyms 0, write rule on, dense 0.25, domain 0; clause tuned)",
         _restricted(points, SHIPPED)),
        ("shipped but dense and domain tuned too", free),
    ]  # fmt: skip
    for parameter in ("dense", "domain"):  # the signals of issue 17: their whole curve
        for value in FUSION_GRID[parameter]:
            held = _restricted(free, {parameter: (value,)})
            variants.append((f"shipped but {parameter} held at {value} (other weight tuned)", held))
    for parameter in PARAMETERS:
        held = _restricted(points, {parameter: (NEUTRAL[parameter],)})
        variants.append((f"all tuned but {parameter} held at {NEUTRAL[parameter]}", held))
    extra = " + synthetic" if always else ""
    title = (
        f"{folds}-fold cross-validation x {repeats} (tune on the other folds{extra}, score the "
        "held-back fold), 95% bootstrap intervals over queries"
    )
    print_cv(title, variants, results, dev, always, folds, repeats, change="nDCG@10 change vs all tuned")
    console.print(
        "A parameter is worth tuning when holding it at its neutral value lowers the cross-validated "
        "figure (negative change); otherwise it is fitted noise."
    )


def print_cv(
    title: str,
    variants: list[tuple[str, list[Point]]],
    results: dict[Point, dict[str, np.ndarray]],
    dev: list[str],
    always: list[str],
    folds: int,
    repeats: int,
    *,
    change: str,
    change_metrics: tuple[int, ...] = (2,),
) -> None:
    """One row per way of choosing: its cross-validated figures (95% bootstrap intervals) and, per
    set, the change against the first row in `change_metrics` (0 R@5, 1 R@10, 2 nDCG@10)."""
    table = Table(title=title)
    table.add_column("procedure")
    for name in dev:
        for metric in ("R@5", "R@10", "nDCG@10"):
            table.add_column(f"{name} {metric}", justify="right")
    table.add_column("mean nDCG@10", justify="right")
    for name in dev:
        table.add_column(f"{name} {change}", justify="right")
    reference = None
    for label, subset in variants:
        per_query = cross_validate(subset, results, dev, always, folds, repeats)
        cells = []
        for name in dev:
            for m in range(3):
                low, high = interval(per_query[name][:, m])
                cells.append(f"{100 * per_query[name][:, m].mean():.1f} [{100 * low:.1f}, {100 * high:.1f}]")
        changes = ["-" for _ in dev]
        if reference is None:
            reference = per_query
        else:
            changes = []
            for name in dev:
                parts = []
                for m in change_metrics:
                    diff = per_query[name][:, m] - reference[name][:, m]
                    low, high = interval(diff)
                    parts.append(f"{100 * diff.mean():+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]")
                changes.append(" / ".join(parts))
        mean = statistics.fmean(float(per_query[name][:, 2].mean()) for name in dev)
        table.add_row(label, *cells, f"{100 * mean:.2f}", *changes)
    console.print(table)


def _cells(values: np.ndarray) -> str:
    return "/".join(f"{100 * v:.1f}" for v in values)


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
    for run in runs:
        if run.per_query is not None:
            bounds = [interval(run.per_query[:, m]) for m in range(3)]
            console.print(
                f"{run.name}: 95% bootstrap intervals "
                + ", ".join(
                    f"{label} [{100 * low:.1f}, {100 * high:.1f}]"
                    for label, (low, high) in zip(("R@5", "R@10", "nDCG@10"), bounds, strict=True)
                )
            )


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
    mode.add_argument("--tune", action="store_true", help="tune on dev, and cross-validate the tuning")
    parser.add_argument("--router", action="store_true", help="with --direct: rank with the Router")
    parser.add_argument("--synthetic", type=int, default=0, help="with --tune: synthetic requests added")
    parser.add_argument("--folds", type=int, default=5, help="with --tune: cross-validation folds")
    parser.add_argument("--repeats", type=int, default=4, help="with --tune: shufflings averaged")
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
            title = "Router" if args.router else "ToolIndex"
            dense = "dense on" if load_embedder() is not None else "dense off (no model installed)"
            runs = direct(args.benchmarks, names, args.k, args.router)
            print_runs(runs, f"{title} on the dev splits, {dense}")
        else:
            tune(args.benchmarks, names, args.top, args.synthetic, args.folds, args.repeats)
    except BenchmarkError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
