"""Benchmark files and metrics: Recall@k and nDCG@10 with gold groups, clear errors on bad files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from colonnade.routing.benchmark import (
    BenchmarkError,
    BenchmarkQuery,
    load_queries,
    load_rankings,
    load_tools,
    score_rankings,
)


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_recall_and_ndcg_count_each_gold_group_once() -> None:
    query = BenchmarkQuery("q", "text", (("a",), ("b1", "b2"), ("c",)))
    scores = score_rankings([query], {"q": ["x", "b2", "a", "b1", "y"]})
    assert scores.recall_at_1 == 0.0
    assert scores.recall_at_5 == pytest.approx(2 / 3)
    assert scores.complete_at_10 == 0.0
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert scores.ndcg_at_10 == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal)


def test_scores_are_means_over_queries_and_missing_rankings_count_as_empty() -> None:
    queries = [BenchmarkQuery("q1", "", (("a",),)), BenchmarkQuery("q2", "", (("b",),))]
    scores = score_rankings(queries, {"q1": ["a"]})
    assert scores.queries == 2
    assert scores.recall_at_1 == scores.ndcg_at_10 == scores.complete_at_10 == 0.5


def test_only_the_top_ten_count() -> None:
    query = BenchmarkQuery("q", "", (("a",),))
    assert score_rankings([query], {"q": [f"x{i}" for i in range(10)] + ["a"]}).recall_at_10 == 0.0


def test_files_load_in_the_shared_format(tmp_path: Path) -> None:
    tools = _write(tmp_path / "tools.jsonl", [
        {"id": "srv/get_x", "name": "get_x", "description": "Get X.", "server": "srv", "category": "Misc",
         "input_schema": {"type": "object", "properties": {"id": {"type": "string", "description": "X id"}}}},
    ])  # fmt: skip
    queries = _write(tmp_path / "q.jsonl", [
        {"id": "1", "query": "get x", "gold": ["srv/get_x"]},
        {"id": "2", "query": "x", "gold": ["a", "b"], "gold_groups": [["a", "b"]]},
    ])  # fmt: skip
    ranks = _write(tmp_path / "r.jsonl", [{"id": "1", "ranked": ["srv/get_x"]}])
    [doc] = load_tools(tools)
    assert (doc.id, doc.name, doc.server, doc.tags, doc.params) == (
        "srv/get_x",
        "get_x",
        "srv",
        ("Misc",),
        (("id", "X id"),),
    )
    assert [q.groups for q in load_queries(queries)] == [(("srv/get_x",),), (("a", "b"),)]
    assert load_rankings(ranks) == {"1": ["srv/get_x"]}


@pytest.mark.parametrize(
    ("content", "loader", "message"),
    [
        ('{"id": "1", "query": "x"}\n', load_queries, r"q\.jsonl:1: a query needs 'id', 'query' and 'gold'"),
        ('{"id": "1"}\nnot json\n', load_rankings, r"q\.jsonl:1: a ranking line needs"),
        ("\n[1, 2]\n", load_rankings, r"q\.jsonl:2: expected a JSON object"),
        ('{"id": "1", "ranked": []}\n{oops\n', load_rankings, r"q\.jsonl:2: not JSON"),
        ('{"name": "x"}\n', load_tools, r"q\.jsonl:1: tool row has no 'id'"),
    ],
)
def test_bad_files_name_the_file_and_line(tmp_path: Path, content: str, loader: object, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BenchmarkError, match=message):
        loader(path)  # type: ignore[operator]


def test_a_missing_file_is_a_benchmark_error(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError, match="cannot read"):
        load_queries(tmp_path / "absent.jsonl")
