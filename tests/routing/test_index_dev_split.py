"""Quality floor on the public Seal-Tools dev split (read from ../shared/benchmarks when present).

A sanity check that retrieval has not regressed, not a benchmark: the numbers quoted in notes come
from `bench/routing_eval.py --direct`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.routing import ToolIndex
from colonnade.routing.benchmark import load_queries, load_tools, score_rankings

SEAL_TOOLS = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "seal-tools"

pytestmark = pytest.mark.skipif(
    not (SEAL_TOOLS / "tools.jsonl").is_file(),
    reason=(
        f"the Seal-Tools benchmark (seal-tools/tools.jsonl, queries.dev.jsonl) is not at {SEAL_TOOLS}: it is"
        " not shipped with the repository; docs/routing.md says what the benchmarks are"
    ),
)


def test_seal_tools_dev_recall_at_5_stays_above_the_floor() -> None:
    index = ToolIndex()
    index.upsert(load_tools(SEAL_TOOLS / "tools.jsonl"))
    queries = load_queries(SEAL_TOOLS / "queries.dev.jsonl")
    rankings = {q.id: [hit.id for hit in index.search(q.query, k=10)] for q in queries}
    scores = score_rankings(queries, rankings)
    assert scores.recall_at_5 >= 0.85
    assert scores.ndcg_at_10 >= 0.85
