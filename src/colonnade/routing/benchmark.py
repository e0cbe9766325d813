"""Tool-retrieval benchmarks in the shared JSONL format, and the metrics the project reports.

Files: `tools.jsonl` (one tool a line, see `documents.doc_from_benchmark`), queries
(`{"id", "query", "gold": [...], "gold_groups": [[...], ...]?}`) and rankings
(`{"id", "ranked": [...]}`, what `colonnade route rank` writes). A gold group is found when any
of its members is retrieved; without `gold_groups` each gold tool is its own group.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colonnade.errors import ColonnadeError
from colonnade.routing.documents import ToolDoc, doc_from_benchmark

__all__ = [
    "BenchmarkError",
    "BenchmarkQuery",
    "Scores",
    "load_queries",
    "load_rankings",
    "load_tools",
    "score_rankings",
]


class BenchmarkError(ColonnadeError, ValueError):
    """A benchmark file cannot be read; the message names the file and line."""

    code = "I-REQ-BENCHMARK"


@dataclass(frozen=True, slots=True)
class BenchmarkQuery:
    id: str
    query: str
    groups: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Scores:
    """Means over queries, as fractions in [0, 1]."""

    queries: int
    recall_at_1: float
    recall_at_5: float
    recall_at_10: float
    ndcg_at_10: float
    complete_at_10: float


def load_tools(path: Path) -> list[ToolDoc]:
    """The tool documents of a `tools.jsonl` file."""
    docs: list[ToolDoc] = []
    for line_no, row in _rows(path):
        try:
            docs.append(doc_from_benchmark(row))
        except ValueError as exc:
            raise BenchmarkError(f"{path}:{line_no}: {exc}") from None
    return docs


def load_queries(path: Path) -> list[BenchmarkQuery]:
    queries: list[BenchmarkQuery] = []
    for line_no, row in _rows(path):
        try:
            gold = row.get("gold_groups") or [[g] for g in row["gold"]]
            groups = tuple(tuple(str(t) for t in group) for group in gold)
            queries.append(BenchmarkQuery(str(row["id"]), str(row["query"]), groups))
        except (KeyError, TypeError) as exc:
            raise BenchmarkError(
                f"{path}:{line_no}: a query needs 'id', 'query' and 'gold' (list of tool ids): {exc}"
            ) from None
    return queries


def load_rankings(path: Path) -> dict[str, list[str]]:
    """Query id -> ranked tool ids, from `{"id", "ranked"}` lines."""
    rankings: dict[str, list[str]] = {}
    for line_no, row in _rows(path):
        ranked = row.get("ranked")
        if "id" not in row or not isinstance(ranked, list):
            raise BenchmarkError(f"{path}:{line_no}: a ranking line needs 'id' and a 'ranked' list")
        rankings[str(row["id"])] = [str(t) for t in ranked]
    return rankings


def score_rankings(queries: Sequence[BenchmarkQuery], rankings: Mapping[str, Sequence[str]]) -> Scores:
    """Recall@1/5/10, nDCG@10 (binary gains, one credit per gold group) and Complete@10.

    A query missing from `rankings` counts as an empty ranking.
    """
    if not queries:
        raise BenchmarkError("no queries to score")
    rows = [_query_scores(q.groups, rankings.get(q.id, ())) for q in queries]
    columns = list(zip(*rows, strict=True))
    means = [statistics.fmean(column) for column in columns]
    return Scores(len(queries), *means)


def _query_scores(groups: Sequence[Sequence[str]], ranked: Sequence[str]) -> tuple[float, ...]:
    first_hit: dict[int, int] = {}
    for position, tool_id in enumerate(ranked[:10]):
        for g, group in enumerate(groups):
            if g not in first_hit and tool_id in group:
                first_hit[g] = position
                break
    n = len(groups)

    def recall(k: int) -> float:
        return sum(1 for p in first_hit.values() if p < k) / n

    dcg = sum(1.0 / math.log2(p + 2) for p in first_hit.values())
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(n, 10)))
    return recall(1), recall(5), recall(10), dcg / ideal, float(len(first_hit) == n)


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BenchmarkError(f"cannot read {path}: {exc.strerror or exc}") from None
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchmarkError(f"{path}:{line_no}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise BenchmarkError(f"{path}:{line_no}: expected a JSON object")
        yield line_no, row
