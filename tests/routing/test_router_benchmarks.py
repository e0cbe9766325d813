"""Re-ranking never costs retrieval quality: on the public dev splits, the router's top 10 scores at
least as well as the index's own top 10 (Recall@5, Recall@10, nDCG@10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from colonnade.config import RoutingSettings
from colonnade.routing.benchmark import load_queries, load_tools, score_rankings
from colonnade.routing.corpus import ToolCorpus
from colonnade.routing.router import Router

BENCHMARKS = Path(__file__).resolve().parents[3] / "shared" / "benchmarks"  # not shipped: docs/routing.md


@pytest.mark.parametrize("name", ["seal-tools", "livemcpbench"])
def test_router_is_no_worse_than_the_index_alone(name: str) -> None:
    folder = BENCHMARKS / name
    if not (folder / "tools.jsonl").exists():
        pytest.skip(
            f"benchmark {name} ({name}/tools.jsonl) is not at {BENCHMARKS}: it is not shipped with the"
            " repository; docs/routing.md says what the benchmarks are"
        )
    corpus = ToolCorpus.from_docs(load_tools(folder / "tools.jsonl"))
    queries = load_queries(folder / "queries.dev.jsonl")
    router = Router.from_settings(RoutingSettings(), corpus)
    alone = score_rankings(queries, {q.id: [h.id for h in corpus.search(q.query, 10)] for q in queries})
    routed = score_rankings(queries, {q.id: router.route(q.query, k=10).selected for q in queries})
    assert routed.recall_at_5 >= alone.recall_at_5
    assert routed.recall_at_10 >= alone.recall_at_10
    assert routed.ndcg_at_10 >= alone.ndcg_at_10
