"""Cross-validate the candidate rules of issue 17's second pass on the dev splits (and the
synthetic requests) only: server expansion, a dense weight by request length, field weights,
stopwords out of the dense vectors.

The lexical parameters stay at the shipped values (`routing/tuned.py`) unless a mode changes
them, so one pass over the queries gives every signal (`ToolIndex.signals`) and each rule is
tried by re-weighing or re-ordering what that pass scored:

- default mode, two fusion rules in one grid:
  - **dense by length**: the dense weight is `dense_short` for a request of fewer than `words`
    words and `dense_long` otherwise (LiveMCPBench's requests run a median 18 words, Seal-Tools'
    56, the synthetic ones 17);
  - **server expansion as a blend**: each tool gains `sibling` times an API-level score, by
    `mode`: "best", the scaled fused score of the best other tool of its API (any API whose
    tool leads lifts its siblings); "second", the second-best other tool (an API needs two
    strong tools); "top1" / "top2", 1 for the matching tools of the API of the best tool (or of
    the best two), 0 elsewhere;
- `--tail`: **bounded server expansion**: the top 10 keeps its first `10 - slots` tools and the
  last `slots` places go to the best remaining matching tools of the APIs of the `leaders` best
  tools (siblings never push a leader out);
- `--domain`: **the server scored as a whole** (`domains.py`: the API as one document of its
  name, description, tags and tool names) and blended into its tools' scores;
- `--fields`: **field weights by length**: the BM25F field weights of `FIELD_VARIANTS`, for long
  requests (>= 25 words), short ones, or both;
- `--dense-text`: **the dense signal from texts without stopwords** (tools and requests);
- `--prior`: **a prior for general-purpose tools** (a browser, a web search, a fetcher, a file
  system serve many unrelated tasks), computed from the tool texts alone, never from labels:
  "idf", one minus the mean inverse document frequency of a tool's name and description terms
  over its catalog (generic tools are described in words many tools use: page, file, url,
  content); "centroid", the cosine of a tool's dense vector to the catalog's mean vector;
  "params", the share of the catalog's APIs that use its most widely used parameter name (a
  tool taking a `query` or a `url` serves open-ended needs; one taking a `station_code`, one). Each
  is scaled to [0, 1] over the catalog and added at weight `prior`, to every request or only to
  long ones (>= 25 words), flat or times the tool's own dense signal;
- `--dense-dims`: **the dense model's first 128 or 64 dimensions** (WordLlama is trained so that a
  prefix of its dimensions is a smaller model of its own): the product, most of a dense search's
  CPU, shrinks in proportion;
- `--rich-text`: **richer tool texts for the dense side only**: each tool's dense text with its
  parameters' descriptions added, and also its API's description (the words-only side unchanged);
- `--prf`: **pseudo-relevance feedback** (`routing_prf.py`): the request's best 3, 5 or 10 tools
  taken as relevant; (a) dense Rocchio, each clause vector plus `alpha` times their mean vector,
  (b) RM3-style terms, their relevance model's 10 best terms added to the BM25F request at
  `beta`, (c) both; alpha, beta, the depth (and in two variants the dense weight) tuned inside
  the folds;
- `--misses`: where the shipped ranking's LiveMCPBench top-10 misses lie (why expansion fails),
  and the misses grouped by server.

Every variant is a restricted grid cross-validated exactly as `routing_eval.py --tune` does
(5 folds x 4 shufflings; the synthetic requests join every training side, never a scored fold):
the figure of a way of choosing, with 95% bootstrap intervals over queries and the per-query
change in nDCG@10 and Recall@10 against the shipped procedure (only the clause weight tuned).
docs/routing.md has the tables. Run (a few minutes each, on a busy 2-core machine):
    nice -n 5 .venv/bin/python bench/routing_expand.py --synthetic 300 \
        [--tail | --domain | --fields | --dense-text | --prior | --dense-dims | --rich-text | --prf]
    nice -n 5 .venv/bin/python bench/routing_expand.py --misses
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import routing_eval
from rich.console import Console
from routing_eval import (
    DEFAULT_BENCHMARKS,
    SETS,
    Loaded,
    _gold_rows,
    _per_query,
    _signal,
    load_set,
    print_cv,
)

from colonnade.routing import IndexConfig, ToolIndex
from colonnade.routing.benchmark import load_tools

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Point = tuple[Any, ...]
Results = dict[Point, dict[str, np.ndarray]]
console = Console(width=400)  # the tables are wide; a narrower console wraps every cell

CLAUSES = (1.0, 2.0, 3.0)  # the clause weight, tuned in every variant as it is in the shipped one
SHIPPED_DENSE = 0.25
GRID: dict[str, tuple[Any, ...]] = {
    "clause": CLAUSES,
    "dense_short": (0.0, 0.25, 0.5, 1.0, 1.5),
    "dense_long": (0.0, 0.25, 0.5, 1.0, 1.5),
    "words": (25, 40),
    "sibling": (0.0, 0.05, 0.1, 0.2, 0.3),
    "mode": ("best", "second", "top1", "top2"),
}
NAMES = tuple(GRID)
# Field weights (name, summary+intent, description, params, server, tags): the shipped ones, and
# one field changed at a time.
FIELD_VARIANTS: dict[str, tuple[float, ...]] = {
    "shipped": (3.0, 1.5, 1.0, 0.5, 1.0, 0.3),
    "description 2": (3.0, 1.5, 2.0, 0.5, 1.0, 0.3),
    "params 1": (3.0, 1.5, 1.0, 1.0, 1.0, 0.3),
    "name 2": (2.0, 1.5, 1.0, 0.5, 1.0, 0.3),
    "server 2": (3.0, 1.5, 1.0, 0.5, 2.0, 0.3),
}
LONG_WORDS = 25


def api_numbers(loaded: Loaded, ids: list[str]) -> IntArray:
    """The API of each row as a number 0..A-1."""
    numbers: dict[str, int] = {}
    by_id = dict(zip(loaded.index._ids, loaded.index._apis, strict=True))
    return np.array([numbers.setdefault(by_id[i], len(numbers)) for i in ids], dtype=np.int64)


def api_lift(total: FloatArray, api: IntArray, mode: str) -> FloatArray:
    """Per query (row of `total`) and tool, the API-level score a tool gains (see `mode` above).

    Scores are first scaled by each query's best, so the lift is in the fused score's units.
    """
    top = total.max(axis=1, keepdims=True)
    scores = total / np.where(top > 0, top, 1.0)
    if mode in ("top1", "top2"):
        leaders = np.argsort(-scores, axis=1, kind="stable")[:, : 1 if mode == "top1" else 2]
        chosen = np.zeros((scores.shape[0], int(api.max()) + 1), dtype=bool)
        np.put_along_axis(chosen, api[leaders], True, axis=1)
        lift: FloatArray = np.where(chosen[:, api] & (scores > 0), 1.0, 0.0)
        return lift
    order = np.argsort(api, kind="stable")
    groups = api[order]
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    grouped = scores[:, order]
    first = np.maximum.reduceat(grouped, starts, axis=1)  # (queries, APIs): each API's best tool
    is_first = grouped >= first[:, groups]
    rest = np.where(is_first, 0.0, grouped)
    second = np.maximum.reduceat(rest, starts, axis=1)
    is_second = ~is_first & (rest >= second[:, groups])
    third = np.maximum.reduceat(np.where(is_first | is_second, 0.0, grouped), starts, axis=1)
    if mode == "best":
        grouped_lift = np.where(is_first, second[:, groups], first[:, groups])
    elif mode == "second":
        grouped_lift = np.where(is_first | is_second, third[:, groups], second[:, groups])
    else:
        raise ValueError(f"unknown mode {mode!r}")
    out = np.empty_like(grouped_lift)
    out[:, order] = grouped_lift
    return out


def tail_fill(total: FloatArray, api: IntArray, slots: int, leaders: int) -> FloatArray:
    """Scores whose top 10 keeps the first `10 - slots` tools of `total` and gives the last
    `slots` places to the best remaining tools (score > 0) of the APIs of the `leaders` best
    tools; places those tools do not fill keep their tools. Only the order of the top 10 counts."""
    out = np.zeros_like(total)
    for i in range(total.shape[0]):
        order = np.argsort(-total[i], kind="stable")
        kept = order[: 10 - slots].tolist()
        apis = set(api[order[:leaders]].tolist())
        siblings = [r for r in order[10 - slots : 500].tolist() if api[r] in apis and total[i, r] > 0][:slots]
        chosen = set(kept + siblings)
        ranked = (kept + siblings + [r for r in order[:10].tolist() if r not in chosen])[:10]
        out[i, ranked] = np.arange(len(ranked) + 1, 1, -1, dtype=np.float64)
    return out


def signals_of(loaded: Loaded) -> tuple[list[str], dict[str, FloatArray]]:
    """Row ids and the stacked (queries, rows) lexical, clause and dense signals of a set."""
    rows = [loaded.index.signals(q.query) for q in loaded.queries]
    stacked = {
        field: np.stack([_signal(getattr(sig, field), sig.lexical) for _, sig in rows])
        for field in ("lexical", "clause", "dense", "domain")
    }
    return rows[0][0], stacked


def blend_scores(sets: dict[str, Loaded]) -> tuple[list[Point], Results]:
    """Per point of `GRID` and set, the per-query metrics (queries, 3)."""
    points = list(itertools.product(*GRID.values()))
    results: Results = {}
    for name, loaded in sets.items():
        ids, sig = signals_of(loaded)
        gold = _gold_rows(loaded.queries, ids)
        api = api_numbers(loaded, ids)
        words = np.array([len(q.query.split()) for q in loaded.queries])
        lifts: dict[Point, FloatArray] = {}
        for point in points:
            p = dict(zip(NAMES, point, strict=True))
            weight = np.where(words < p["words"], p["dense_short"], p["dense_long"])[:, None]
            total = sig["lexical"] + p["clause"] * sig["clause"] + weight * sig["dense"]
            if p["sibling"]:
                key = (p["clause"], p["dense_short"], p["dense_long"], p["words"], p["mode"])
                if key not in lifts:
                    lifts[key] = api_lift(total, api, p["mode"])
                top = total.max(axis=1, keepdims=True)
                total = total / np.where(top > 0, top, 1.0) + p["sibling"] * lifts[key]
            results.setdefault(point, {})[name] = _per_query(loaded.queries, gold, total)
        console.print(f"scored {name}: {len(loaded.queries)} queries x {len(points)} points")
    return points, results


def blend_variants(points: list[Point]) -> list[tuple[str, list[Point]]]:
    def only(**fixed: tuple[Any, ...]) -> list[Point]:
        return [p for p in points if all(p[NAMES.index(k)] in v for k, v in fixed.items())]

    no_lift = {"sibling": (0.0,), "mode": ("best",)}
    dense_fixed = {"dense_short": (SHIPPED_DENSE,), "dense_long": (SHIPPED_DENSE,), "words": (LONG_WORDS,)}
    variants = [
        ("shipped (dense 0.25, clause tuned)", only(**dense_fixed, **no_lift)),
        ("one dense weight for all, tuned",
         [p for p in only(words=(LONG_WORDS,), **no_lift) if p[1] == p[2]]),
        ("dense by length (25 words), both weights tuned", only(words=(25,), **no_lift)),
        ("dense by length (40 words), both weights tuned", only(words=(40,), **no_lift)),
        ("dense by length, threshold and weights tuned", only(**no_lift)),
    ]  # fmt: skip
    for short, long in ((0.0, 1.0), (0.25, 0.5), (0.25, 1.0)):
        variants.append((f"dense held at {short} short / {long} long (25 words)",
                         only(dense_short=(short,), dense_long=(long,), words=(25,), **no_lift)))  # fmt: skip
    for mode in GRID["mode"]:
        variants.append((f"server lift {mode}, weight tuned (0-0.3)", only(**dense_fixed, mode=(mode,))))
    variants.append(("server lift, mode and weight tuned", only(**dense_fixed)))
    for value in GRID["sibling"][1:]:
        for mode in GRID["mode"]:
            variants.append((f"server lift {mode} held at {value}",
                             only(**dense_fixed, sibling=(value,), mode=(mode,))))  # fmt: skip
    variants.append(("everything in the grid tuned", points))
    return variants


def tail_scores(sets: dict[str, Loaded]) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (clause weight, slots, leaders); slots 0 is the shipped ranking."""
    results: Results = {}
    for name, loaded in sets.items():
        ids, sig = signals_of(loaded)
        gold = _gold_rows(loaded.queries, ids)
        api = api_numbers(loaded, ids)
        for clause in CLAUSES:
            total = sig["lexical"] + clause * sig["clause"] + SHIPPED_DENSE * sig["dense"]
            results.setdefault((clause, 0, 0), {})[name] = _per_query(loaded.queries, gold, total)
            for slots, leaders in itertools.product((1, 2, 3), (1, 2)):
                filled = tail_fill(total, api, slots, leaders)
                results.setdefault((clause, slots, leaders), {})[name] = _per_query(
                    loaded.queries, gold, filled
                )
        console.print(f"scored {name}")
    points = list(results)
    variants = [
        ("shipped (clause tuned)", [p for p in points if p[1] == 0]),
        ("tail fill tuned (slots 0-3, leaders 1-2)", points),
    ]
    for slots, leaders in itertools.product((1, 2, 3), (1, 2)):
        variants.append((f"tail fill held at {slots} places, {leaders} leading APIs",
                         [p for p in points if p[1:] == (slots, leaders)]))  # fmt: skip
    return results, variants


def domain_scores(sets: dict[str, Loaded]) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (clause weight, domain weight): the API scored as one document (`domains.py`) and
    blended into its tools' scores, with the dense weight as shipped."""
    weights = (0.0, 0.1, 0.25, 0.5)
    results: Results = {}
    for name, loaded in sets.items():
        ids, sig = signals_of(loaded)
        gold = _gold_rows(loaded.queries, ids)
        for clause, domain in itertools.product(CLAUSES, weights):
            total = (
                sig["lexical"]
                + clause * sig["clause"]
                + SHIPPED_DENSE * sig["dense"]
                + domain * sig["domain"]
            )
            results[(clause, domain)] = results.get((clause, domain), {}) | {
                name: _per_query(loaded.queries, gold, total)
            }
        console.print(f"scored {name}")
    points = list(results)
    variants = [
        ("shipped (domain 0, clause tuned)", [p for p in points if p[1] == 0.0]),
        ("domain weight tuned", points),
    ]
    for domain in weights[1:]:
        variants.append((f"domain held at {domain}", [p for p in points if p[1] == domain]))
    return results, variants


def field_scores(sets: dict[str, Loaded]) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (variant for long requests, variant for short ones, clause weight)."""
    base: dict[tuple[str, float], dict[str, np.ndarray]] = {}
    for variant, weights in FIELD_VARIANTS.items():
        for name, loaded in sets.items():
            loaded.index.configure(replace(IndexConfig(), field_weights=weights))
            ids, sig = signals_of(loaded)
            gold = _gold_rows(loaded.queries, ids)
            for clause in CLAUSES:
                total = sig["lexical"] + clause * sig["clause"] + SHIPPED_DENSE * sig["dense"]
                base.setdefault((variant, clause), {})[name] = _per_query(loaded.queries, gold, total)
        console.print(f"scored field variant {variant}")
    long = {name: (np.array([len(q.query.split()) for q in s.queries]) >= LONG_WORDS)[:, None]
            for name, s in sets.items()}  # fmt: skip
    results: Results = {}
    for for_long, for_short, clause in itertools.product(FIELD_VARIANTS, FIELD_VARIANTS, CLAUSES):
        results[(for_long, for_short, clause)] = {
            name: np.where(long[name], base[(for_long, clause)][name], base[(for_short, clause)][name])
            for name in sets
        }
    points = list(results)
    variants = [("shipped (clause tuned)", [p for p in points if p[:2] == ("shipped", "shipped")])]
    for v in FIELD_VARIANTS:
        if v != "shipped":
            variants.append((f"{v} for all", [p for p in points if p[:2] == (v, v)]))
            variants.append((f"{v} for long requests only", [p for p in points if p[:2] == (v, "shipped")]))
            variants.append((f"{v} for short requests only", [p for p in points if p[:2] == ("shipped", v)]))
    variants.append(("one variant for all, tuned", [p for p in points if p[0] == p[1]]))
    variants.append(("long and short variants tuned", points))
    return results, variants


def generality(docs: list[Any], kind: str) -> FloatArray:
    """Per tool, how general-purpose its own text says it is, scaled to [0, 1] over the catalog."""
    from colonnade.routing.documents import dense_text
    from colonnade.routing.tokenize import Analyzer

    if kind == "params":
        apis: dict[str, set[str]] = {}
        for doc in docs:
            for param, _ in doc.params:
                apis.setdefault(param.lower(), set()).add(doc.server)
        raw = np.array(
            [max((len(apis[p.lower()]) for p, _ in doc.params), default=0) for doc in docs], dtype=np.float64
        ) / max(1, len({doc.server for doc in docs}))
    elif kind == "idf":
        analyzer = Analyzer()
        terms = [set(analyzer.terms(f"{doc.name} {doc.description}")) for doc in docs]
        df: dict[str, int] = {}
        for seen in terms:
            for term in seen:
                df[term] = df.get(term, 0) + 1
        n = len(docs)
        idf = [np.mean([np.log(n / df[t]) for t in seen]) / np.log(n) if seen else 1.0 for seen in terms]
        raw = 1.0 - np.array(idf, dtype=np.float64)
    else:
        vectors = installed_embedder().embed([dense_text(doc) for doc in docs]).astype(np.float64)
        mean = vectors.mean(axis=0)
        raw = vectors @ (mean / np.linalg.norm(mean))
    low, high = raw.min(), raw.max()
    scaled: FloatArray = (raw - low) / (high - low) if high > low else np.zeros(len(raw))
    return scaled


def prior_scores(sets: dict[str, Loaded], root: Path) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (clause weight, generality kind, gate, form, prior weight), dense as shipped."""
    weights = (0.0, 0.05, 0.1, 0.2, 0.3)
    kinds, gates, forms = ("idf", "centroid", "params"), ("all", "long"), ("flat", "x dense")
    results: Results = {}
    for name, loaded in sets.items():
        ids, sig = signals_of(loaded)
        gold = _gold_rows(loaded.queries, ids)
        source = "livemcpbench" if name == "synthetic" else name
        by_id = {doc.id: doc for doc in load_tools(root / source / "tools.jsonl")}
        docs = [by_id[i] for i in ids]
        long = (np.array([len(q.query.split()) for q in loaded.queries]) >= LONG_WORDS)[:, None]
        for kind in kinds:
            prior = generality(docs, kind)[None, :]
            if name == "livemcpbench":
                top = np.argsort(-prior[0])[:12]
                console.print(f"most general by {kind}: " + ", ".join(ids[i] for i in top))
            for clause, gate, form, weight in itertools.product(CLAUSES, gates, forms, weights):
                total = sig["lexical"] + clause * sig["clause"] + SHIPPED_DENSE * sig["dense"]
                if weight:
                    lift = prior * (sig["dense"] if form == "x dense" else 1.0)
                    total = total + weight * (lift * long if gate == "long" else lift)
                results.setdefault((clause, kind, gate, form, weight), {})[name] = _per_query(
                    loaded.queries, gold, total
                )
        console.print(f"scored {name}")
    points = list(results)
    variants = [
        ("shipped (clause tuned)", [p for p in points if p[4] == 0.0 and p[1:4] == ("idf", "all", "flat")])
    ]
    for kind, gate, form in itertools.product(kinds, gates, forms):
        variants.append((f"prior {kind}, {gate} requests, {form}, weight tuned",
                         [p for p in points if p[1:4] == (kind, gate, form)]))  # fmt: skip
    variants.append(("prior: kind, gate, form and weight tuned", points))
    for kind, gate, form, weight in itertools.product(kinds, gates, forms, weights[1:4]):
        variants.append((f"prior {kind}, {gate}, {form} held at {weight}",
                         [p for p in points if p[1:] == (kind, gate, form, weight)]))  # fmt: skip
    return results, variants


def misses(loaded: Loaded) -> None:
    """Where the shipped ranking's top-10 misses lie: in the API of one of the two best tools (and
    then at which place among that API's tools) or elsewhere."""
    index = loaded.index
    api_of = dict(zip(index._ids, index._apis, strict=True))
    size: dict[str, int] = {}
    for api in index._apis:
        size[api] = size.get(api, 0) + 1
    groups = missed = 0
    leading: list[str] = []
    for query in loaded.queries:
        ranked = [hit.id for hit in index.search(query.query, len(index))]
        position = {tool_id: i for i, tool_id in enumerate(ranked)}
        for group in query.groups:
            groups += 1
            best = min((position[t] for t in group if t in position), default=len(ranked))
            if best < 10:
                continue
            missed += 1
            api = api_of[group[0]]
            if api in {api_of[t] for t in ranked[:2]}:
                siblings = [t for t in ranked if api_of[t] == api]
                place = siblings.index(group[0]) + 1 if group[0] in siblings else None
                leading.append(f"{group[0]}: place {best + 1}, {place} of the {size[api]} tools of {api}")
    console.print(f"{groups} gold groups, {missed} missed in the top 10, {len(leading)} of them in the API "
                  "of one of the two best tools:")  # fmt: skip
    for line in leading:
        console.print(f"  {line}")
    misses_by_server(loaded)


def misses_by_server(loaded: Loaded) -> None:
    """The gold groups the shipped ranking misses in its top 10, grouped by the server (API) of
    the group's first tool: how many, of how many gold groups of that server, how many of them
    with a tool of that server in the top 10 anyway (only there can feedback from the top of the
    ranking point), and which tools at which place; then the dev Recall@10 if the misses of the
    servers that miss most were found (what knowing those servers' tasks would be worth)."""
    from rich.table import Table

    index = loaded.index
    api_of = dict(zip(index._ids, index._apis, strict=True))
    gold: dict[str, int] = {}
    missed: dict[str, list[str]] = {}
    reachable: dict[str, int] = {}
    per_query: list[tuple[int, list[str]]] = []  # found groups, servers of the missed groups
    for query in loaded.queries:
        ranked = [hit.id for hit in index.search(query.query, len(index))]
        position = {tool_id: i for i, tool_id in enumerate(ranked)}
        per_query.append((0, []))
        for group in query.groups:
            api = api_of[group[0]]
            gold[api] = gold.get(api, 0) + 1
            best = min((position[t] for t in group if t in position), default=len(ranked))
            if best >= 10:
                missed.setdefault(api, []).append(f"{group[0].split('/', 1)[-1]} ({best + 1})")
                in_top = any(api_of[t] == api for t in ranked[:10])
                reachable[api] = reachable.get(api, 0) + in_top
                per_query[-1][1].append(api)
            else:
                per_query[-1] = (per_query[-1][0] + 1, per_query[-1][1])
    total = sum(len(tools) for tools in missed.values())
    table = Table(
        title=f"{total} of {sum(gold.values())} gold groups missed in the top 10, by server "
        f"({sum(reachable.values())} with a tool of their server in the top 10)"
    )
    for column in ("server", "missed", "of its gold groups", "server in the top 10", "missed tools (place)"):
        table.add_column(column)
    for api, tools in sorted(missed.items(), key=lambda item: (-len(item[1]), item[0])):
        table.add_row(api, str(len(tools)), str(gold[api]), str(reachable[api]), ", ".join(tools))
    console.print(table)
    worst = sorted(missed, key=lambda api: (-len(missed[api]), api))
    for top in (0, 1, 2, 3):
        found = set(worst[:top])
        recall = np.mean(
            [(hits + sum(a in found for a in apis)) / (hits + len(apis)) for hits, apis in per_query]
        )
        what = f"with the misses of {', '.join(worst[:top])} found" if top else "as ranked"
        console.print(f"dev Recall@10 {what}: {100 * recall:.1f}")


PRF_ALPHAS = (0.0, 0.1, 0.25, 0.5, 1.0)  # dense Rocchio: weight of the feedback tools' mean vector
PRF_BETAS = (0.0, 0.1, 0.25, 0.5, 1.0)  # RM3: weight of the expansion terms
PRF_DEPTHS = (3, 5, 10)  # feedback tools: the request's best 3, 5 or 10
PRF_DENSE = (SHIPPED_DENSE, 0.5, 1.0)  # the dense weight, shipped or tuned (Rocchio moves only it)


def prf_scores(sets: dict[str, Loaded]) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (clause weight, depth, alpha, beta, dense weight): pseudo-relevance feedback
    (`routing_prf.py`) from the shipped ranking at that clause weight (feedback is always taken
    at the shipped dense weight); alpha = beta = 0 at dense 0.25 is the shipped ranking."""
    from routing_prf import analyse, feedback_rows, rm3_lexical, rocchio_dense, tool_vectors

    results: Results = {}
    for name, loaded in sets.items():
        index = loaded.index
        ids, sig = signals_of(loaded)
        gold = _gold_rows(loaded.queries, ids)
        requests = [analyse(index, q.query) for q in loaded.queries]
        tools = tool_vectors(index)
        for clause in CLAUSES:
            base = sig["lexical"] + clause * sig["clause"] + SHIPPED_DENSE * sig["dense"]
            for depth in PRF_DEPTHS:
                rows = feedback_rows(base, depth)
                dense = {0.0: sig["dense"]}
                for alpha in PRF_ALPHAS[1:]:
                    dense[alpha] = np.stack(
                        [rocchio_dense(index, r, tools, rows[q], alpha) for q, r in enumerate(requests)]
                    )
                expanded = [
                    rm3_lexical(index, r, rows[q], base[q, rows[q]], PRF_BETAS[1:])
                    for q, r in enumerate(requests)
                ]
                lexical = {0.0: sig["lexical"]}
                for b, beta in enumerate(PRF_BETAS[1:]):
                    lexical[beta] = np.stack([per_beta[b] for per_beta in expanded])
                for alpha, beta, weight in itertools.product(PRF_ALPHAS, PRF_BETAS, PRF_DENSE):
                    total = lexical[beta] + clause * sig["clause"] + weight * dense[alpha]
                    results.setdefault((clause, depth, alpha, beta, weight), {})[name] = _per_query(
                        loaded.queries, gold, total
                    )
        console.print(f"scored {name}: {len(loaded.queries)} queries x {len(results)} points")
    return results, prf_variants(list(results))


def prf_variants(points: list[Point]) -> list[tuple[str, list[Point]]]:
    """The ways of choosing: each form with its weight and depth tuned (forced on, or with 0 among
    the choices), and held points."""

    def only(
        depths: tuple[int, ...],
        alphas: tuple[float, ...],
        betas: tuple[float, ...],
        dense: tuple[float, ...] = (SHIPPED_DENSE,),
    ) -> list[Point]:
        return [p for p in points if p[1] in depths and p[2] in alphas and p[3] in betas and p[4] in dense]

    on_a, on_b = PRF_ALPHAS[1:], PRF_BETAS[1:]
    variants = [
        ("shipped (no feedback, clause tuned)", only((PRF_DEPTHS[0],), (0.0,), (0.0,))),
        ("no feedback, dense weight tuned", only((PRF_DEPTHS[0],), (0.0,), (0.0,), PRF_DENSE)),
        ("(a) dense Rocchio, alpha, depth and dense weight tuned", only(PRF_DEPTHS, on_a, (0.0,), PRF_DENSE)),
        ("(a) dense Rocchio, alpha and depth tuned", only(PRF_DEPTHS, on_a, (0.0,))),
        ("(a) dense Rocchio, alpha (0 allowed) and depth tuned", only(PRF_DEPTHS, PRF_ALPHAS, (0.0,))),
        ("(b) RM3 terms, beta and depth tuned", only(PRF_DEPTHS, (0.0,), on_b)),
        ("(b) RM3 terms, beta (0 allowed) and depth tuned", only(PRF_DEPTHS, (0.0,), PRF_BETAS)),
        ("(c) both, alpha, beta and depth tuned", only(PRF_DEPTHS, on_a, on_b)),
        ("(c) both, alpha, beta (0 allowed) and depth tuned", only(PRF_DEPTHS, PRF_ALPHAS, PRF_BETAS)),
        ("(c) both, alpha, beta (0 allowed), depth and dense weight tuned", points),
    ]
    for depth in PRF_DEPTHS:
        for alpha in on_a:
            variants.append((f"(a) held at alpha {alpha}, depth {depth}", only((depth,), (alpha,), (0.0,))))
        for beta in on_b:
            variants.append((f"(b) held at beta {beta}, depth {depth}", only((depth,), (0.0,), (beta,))))
        for value in (0.25, 0.5):
            variants.append((f"(c) held at alpha = beta = {value}, depth {depth}",
                             only((depth,), (value,), (value,))))  # fmt: skip
    return variants


class StoplessEmbedder:
    """The installed embedder, fed texts without stopwords: a static model sums token vectors, so
    "I", "the", "can you" weigh as much as "station" or "slide". `query_stopwords` strips the
    larger request list (`QUERY_STOPWORDS`) from texts embedded once `querying` is set."""

    def __init__(self, inner: Any, document: frozenset[str], query: frozenset[str]) -> None:
        self.inner, self.document, self.query = inner, document, query
        self.querying = False
        self.model_id = f"{inner.model_id}/stopless"

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: list[str]) -> Any:
        stop = self.query if self.querying else self.document
        words = re.compile(r"[A-Za-z']+")
        kept = [words.sub(lambda m: "" if m.group(0).lower() in stop else m.group(0), t) for t in texts]
        return self.inner.embed(kept)


class TruncatedEmbedder:
    """The installed embedder cut to its first `dim` dimensions, renormalised."""

    def __init__(self, inner: Any, dim: int) -> None:
        self.inner, self.dim = inner, dim
        self.model_id = f"{inner.model_id}/first{dim}"

    def embed(self, texts: list[str]) -> Any:
        vectors = np.ascontiguousarray(self.inner.embed(texts)[:, : self.dim])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=vectors, where=norms > 0)


def installed_embedder() -> Any:
    """The dense model the router would load, or exit saying how to install it."""
    from colonnade.routing.dense import load_embedder

    inner = load_embedder()
    if inner is None:
        raise SystemExit("no dense model installed (pip install 'colonnade[dense]')")
    return inner


def tools_of(root: Path, name: str) -> list[Any]:
    """The tools of a set (the synthetic requests use LiveMCPBench's)."""
    source = "livemcpbench" if name == "synthetic" else name
    return load_tools(root / source / "tools.jsonl")


def reindexed(loaded: Loaded, embedder: Any, docs: list[Any]) -> Loaded:
    """The set's requests over an index of `docs` built with another embedder."""
    index = ToolIndex(embedder=embedder)
    index.upsert(docs)
    index.compact()
    return Loaded(index, loaded.queries, 0.0)


def score_grid(
    results: Results, variant: Any, name: str, loaded: Loaded, dense_weights: tuple[float, ...]
) -> None:
    """Score a set at every (clause, dense) weight pair, under the key (variant, clause, dense)."""
    ids, sig = signals_of(loaded)
    gold = _gold_rows(loaded.queries, ids)
    for clause, dense in itertools.product(CLAUSES, dense_weights):
        total = sig["lexical"] + clause * sig["clause"] + dense * sig["dense"]
        results.setdefault((variant, clause, dense), {})[name] = _per_query(loaded.queries, gold, total)


def dense_dims_scores(sets: dict[str, Loaded], root: Path) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (dimensions, clause weight, dense weight)."""
    inner = installed_embedder()
    dense_weights = (0.0, 0.25, 0.5, 1.0)
    results: Results = {}
    for dims in (256, 128, 64):
        for name, loaded in sets.items():
            if dims != inner.dim:
                loaded = reindexed(loaded, TruncatedEmbedder(inner, dims), tools_of(root, name))
            score_grid(results, dims, name, loaded, dense_weights)
        console.print(f"scored {dims} dimensions")
    points = list(results)
    variants = [
        ("shipped (256, dense 0.25, clause tuned)", [p for p in points if p[0] == 256 and p[2] == 0.25])
    ]
    for dims in (128, 64):
        variants.append((f"first {dims}, dense 0.25", [p for p in points if p[0] == dims and p[2] == 0.25]))
        variants.append((f"first {dims}, dense weight tuned", [p for p in points if p[0] == dims]))
    return results, variants


class RicherTextEmbedder:
    """The installed embedder, fed a richer text for each tool: `texts` maps a tool's shipped
    dense text to the richer one (requests, not in it, pass through unchanged)."""

    def __init__(self, inner: Any, texts: dict[str, str], label: str) -> None:
        self.inner, self.texts = inner, texts
        self.dim = inner.dim
        self.model_id = f"{inner.model_id}/{label}"

    def embed(self, texts: list[str]) -> Any:
        return self.inner.embed([self.texts.get(text, text) for text in texts])


def rich_text_scores(sets: dict[str, Loaded], root: Path) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (tool text, clause weight, dense weight)."""
    from colonnade.routing.documents import dense_text

    inner = installed_embedder()

    def with_params(doc: Any) -> str:
        return " ".join([dense_text(doc), *(text for _, text in doc.params if text)])

    def with_api(doc: Any) -> str:
        return " ".join(part for part in (with_params(doc), doc.server_description) if part)

    variants_of = {"shipped": None, "+ parameter descriptions": with_params, "+ API description": with_api}
    dense_weights = (0.0, 0.25, 0.5, 1.0)
    results: Results = {}
    for variant, richer in variants_of.items():
        for name, loaded in sets.items():
            if richer is not None:
                docs = tools_of(root, name)
                texts = {dense_text(doc): richer(doc) for doc in docs}
                loaded = reindexed(loaded, RicherTextEmbedder(inner, texts, variant), docs)
            score_grid(results, variant, name, loaded, dense_weights)
        console.print(f"scored tool text {variant}")
    points = list(results)
    variants = [
        ("shipped (dense 0.25, clause tuned)", [p for p in points if p[0] == "shipped" and p[2] == 0.25])
    ]
    for variant in list(variants_of)[1:]:
        variants.append((f"{variant}, dense 0.25", [p for p in points if p[0] == variant and p[2] == 0.25]))
        variants.append((f"{variant}, dense weight tuned", [p for p in points if p[0] == variant]))
    return results, variants


def dense_text_scores(sets: dict[str, Loaded], root: Path) -> tuple[Results, list[tuple[str, list[Point]]]]:
    """Points (embedding variant, clause weight, dense weight)."""
    from colonnade.routing.tokenize import DOCUMENT_STOPWORDS, QUERY_STOPWORDS

    inner = installed_embedder()
    embedders: dict[str, Any] = {
        "shipped": None,
        "no stopwords": StoplessEmbedder(inner, DOCUMENT_STOPWORDS, DOCUMENT_STOPWORDS),
        "no stopwords, request list for requests": StoplessEmbedder(
            inner, DOCUMENT_STOPWORDS, QUERY_STOPWORDS
        ),
    }
    dense_weights = (0.0, 0.25, 0.5, 1.0)
    results: Results = {}
    for variant, embedder in embedders.items():
        for name, loaded in sets.items():
            if embedder is not None:
                embedder.querying = False
                loaded = reindexed(loaded, embedder, tools_of(root, name))
                embedder.querying = True
            score_grid(results, variant, name, loaded, dense_weights)
        console.print(f"scored embedding variant {variant}")
    points = list(results)
    variants = [
        ("shipped (dense 0.25, clause tuned)", [p for p in points if p[0] == "shipped" and p[2] == 0.25])
    ]
    for variant in list(embedders)[1:]:
        variants.append((f"{variant}, dense 0.25", [p for p in points if p[0] == variant and p[2] == 0.25]))
    for variant in embedders:
        variants.append((f"{variant}, dense weight tuned", [p for p in points if p[0] == variant]))
    for dense in dense_weights:
        variants.append((f"no stopwords, dense held at {dense}",
                         [p for p in points if p[0] == "no stopwords" and p[2] == dense]))  # fmt: skip
    return results, variants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="benchmarks directory")
    parser.add_argument("--synthetic", type=int, default=300, help="synthetic requests (0: none)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=4)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--tail", action="store_true", help="bounded server expansion (tail fill)")
    mode.add_argument("--fields", action="store_true", help="field weights by request length")
    mode.add_argument("--dense-text", action="store_true", help="embed texts without stopwords")
    mode.add_argument("--domain", action="store_true", help="the API's own score blended in")
    mode.add_argument("--prior", action="store_true", help="a prior for general-purpose tools")
    mode.add_argument("--rich-text", action="store_true", help="richer tool texts, dense side only")
    mode.add_argument("--dense-dims", action="store_true", help="the dense model's first 128 / 64 dimensions")
    mode.add_argument("--prf", action="store_true", help="pseudo-relevance feedback (Rocchio, RM3)")
    mode.add_argument("--misses", action="store_true", help="LiveMCPBench's top-10 misses, by server")
    args = parser.parse_args(argv)
    if args.misses:
        misses(load_set(args.benchmarks, "livemcpbench"))
        return 0
    sets = {name: load_set(args.benchmarks, name) for name in SETS}
    always: list[str] = []
    if args.synthetic:
        from routing_synth import synthetic_queries

        loaded = load_set(args.benchmarks, "livemcpbench")
        tools = load_tools(args.benchmarks / "livemcpbench" / "tools.jsonl")
        loaded.queries = synthetic_queries(tools, args.synthetic)
        sets["synthetic"] = loaded
        always.append("synthetic")
    if args.tail:
        results, variants = tail_scores(sets)
        title = "bounded server expansion (tail fill), dense 0.25"
    elif args.dense_text:
        results, variants = dense_text_scores(sets, args.benchmarks)
        title = "dense signal from texts without stopwords"
    elif args.rich_text:
        results, variants = rich_text_scores(sets, args.benchmarks)
        title = "richer tool texts for the dense side"
    elif args.dense_dims:
        results, variants = dense_dims_scores(sets, args.benchmarks)
        title = "the dense model's first dimensions only"
    elif args.prior:
        results, variants = prior_scores(sets, args.benchmarks)
        title = "a prior for general-purpose tools (from the tool texts), dense 0.25"
    elif args.prf:
        results, variants = prf_scores(sets)
        title = "pseudo-relevance feedback from the shipped ranking, dense 0.25"
    elif args.domain:
        results, variants = domain_scores(sets)
        title = "server score (the API as one document) blended into its tools', dense 0.25"
    elif args.fields:
        results, variants = field_scores(sets)
        title = "field weights by request length (>= 25 words), dense 0.25"
    else:
        points, results = blend_scores(sets)
        variants = blend_variants(points)
        title = "dense weight by request length, server expansion as a blend"
    routing_eval.console.width = console.width  # print_cv's console: as wide as this one
    print_cv(
        f"{title}: {args.folds}-fold CV x {args.repeats}, 95% bootstrap intervals over queries",
        variants,
        results,
        list(SETS),
        always,
        args.folds,
        args.repeats,
        change="change nDCG@10 / R@10",
        change_metrics=(2, 1),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
