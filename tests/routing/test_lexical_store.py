"""BM25F scoring over segmented postings: the Lucene formula, field weights, updates in place."""

from __future__ import annotations

import math

import numpy as np
import pytest

from colonnade.routing.lexical import Bm25Params, LexicalStore

ONE_FIELD = Bm25Params(k1=1.2, field_weights=(1.0,), field_b=(0.75,))
CORPUS = [["red", "apple", "apple"], ["green", "apple"], ["red", "car", "fast", "car"]]


def _query(store: LexicalStore, *terms: str) -> np.ndarray:
    return np.asarray(store.vocabulary.lookup(list(terms)), dtype=np.int64)


def _lucene_bm25(
    term: str, doc: list[str], corpus: list[list[str]], k1: float = 1.2, b: float = 0.75
) -> float:
    df = sum(term in d for d in corpus)
    idf = math.log(1 + (len(corpus) - df + 0.5) / (df + 0.5))
    tf = doc.count(term)
    average = sum(map(len, corpus)) / len(corpus)
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / average))


def test_single_field_scores_equal_lucene_bm25() -> None:
    store = LexicalStore(ONE_FIELD)
    store.add([[doc] for doc in CORPUS])
    scores = store.scores(_query(store, "red", "apple"))
    expected = [_lucene_bm25("red", d, CORPUS) + _lucene_bm25("apple", d, CORPUS) for d in CORPUS]
    assert scores == pytest.approx(expected, rel=1e-12)


def test_query_term_weights_multiply_each_term() -> None:
    store = LexicalStore(ONE_FIELD)
    store.add([[doc] for doc in CORPUS])
    twice = store.scores(_query(store, "car"), np.array([2.0]))
    assert twice[2] == pytest.approx(2 * _lucene_bm25("car", CORPUS[2], CORPUS))


def test_a_word_in_a_heavier_field_scores_higher() -> None:
    store = LexicalStore(Bm25Params(k1=1.2, field_weights=(3.0, 1.0), field_b=(0.5, 0.5)))
    store.add([[["invoice"], ["list", "things"]], [["list"], ["invoice", "things"]]])
    scores = store.scores(_query(store, "invoice"))
    assert scores[0] > scores[1] > 0


def test_removed_rows_score_zero_and_leave_the_statistics() -> None:
    store = LexicalStore(ONE_FIELD)
    store.add([[doc] for doc in CORPUS])
    store.remove(1)
    rest = [CORPUS[0], CORPUS[2]]
    scores = store.scores(_query(store, "apple", "red"))
    assert scores[1] == 0.0
    assert scores[0] == pytest.approx(
        _lucene_bm25("apple", CORPUS[0], rest) + _lucene_bm25("red", CORPUS[0], rest)
    )


def test_scores_after_compaction_are_identical_to_a_fresh_store() -> None:
    grown = LexicalStore(ONE_FIELD)
    grown.add([[doc] for doc in CORPUS[:2]])
    grown.compact()
    grown.add([[CORPUS[2]], [["blue", "car"]]])
    grown.remove(3)
    fresh = LexicalStore(ONE_FIELD)
    fresh.add([[doc] for doc in CORPUS])
    before = grown.scores(_query(grown, "car", "red", "apple"))
    assert before[:3].tolist() == fresh.scores(_query(fresh, "car", "red", "apple")).tolist()
    grown.compact()
    assert grown.scores(_query(grown, "car", "red", "apple")).tolist() == before[:3].tolist()


def test_unknown_terms_are_not_looked_up_and_empty_queries_score_nothing() -> None:
    store = LexicalStore(ONE_FIELD)
    store.add([[doc] for doc in CORPUS])
    assert _query(store, "bicycle").size == 0
    assert not store.scores(_query(store, "bicycle")).any()


def test_documents_need_one_term_list_per_field() -> None:
    store = LexicalStore(ONE_FIELD)
    with pytest.raises(ValueError, match="expected 1 fields"):
        store.add([[["a"], ["b"]]])


@pytest.mark.parametrize(
    ("k1", "weights", "b"), [(0.0, (1.0,), (0.5,)), (1.2, (-1.0,), (0.5,)), (1.2, (1.0,), (1.5,))]
)
def test_invalid_parameters_are_refused(k1: float, weights: tuple[float, ...], b: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="k1 > 0"):
        Bm25Params(k1, weights, b)


def test_the_first_query_after_a_change_scores_exactly_like_later_cached_ones() -> None:
    store = LexicalStore(Bm25Params(k1=1.5, field_weights=(2.0, 0.7), field_b=(0.3, 0.8)))
    store.add(
        [[["alpha", "beta"], ["gamma", "beta", "beta"]], [["beta"], ["alpha", "delta"]], [["gamma"], []]]
    )
    query = _query(store, "beta", "alpha", "gamma")
    first = store.scores(query)
    assert store.scores(query).tolist() == first.tolist()  # now from the per-posting cache
    assert store.scores(query).tolist() == first.tolist()
    store.remove(2)
    changed = store.scores(query)
    assert changed[2] == 0.0 and changed[:2].tolist() != first[:2].tolist()
    assert store.scores(query).tolist() == changed.tolist()
