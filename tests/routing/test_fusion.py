"""Weighted fusion: signals scaled by their best value, weighted, summed."""

from __future__ import annotations

import numpy as np
import pytest

from colonnade.routing.fusion import FusionWeights, best_of, fuse, scaled


def test_scaled_divides_by_the_maximum_and_keeps_zeros() -> None:
    assert scaled(np.array([2.0, 1.0, 0.0])).tolist() == [1.0, 0.5, 0.0]
    assert scaled(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_best_of_takes_each_rows_best_scaled_clause() -> None:
    clauses = [np.array([4.0, 2.0, 0.0]), np.array([0.0, 1.0, 10.0])]
    assert best_of(clauses, 3).tolist() == [1.0, 0.5, 1.0]
    assert best_of([], 2).tolist() == [0.0, 0.0]


def test_fuse_weights_each_signal() -> None:
    query = np.array([10.0, 5.0, 0.0])
    clauses = [np.array([0.0, 1.0, 2.0])]
    fused = fuse(FusionWeights(query=1.0, clause=2.0), query, clauses)
    assert fused.tolist() == pytest.approx([1.0 / 3, (0.5 + 2 * 0.5) / 3, 2 * 1.0 / 3])


def test_dense_and_domain_signals_count_only_when_given_and_weighted() -> None:
    query = np.array([2.0, 1.0])
    weights = FusionWeights(query=1.0, clause=0.0, dense=1.0, domain=2.0)
    assert fuse(weights, query).tolist() == pytest.approx([1.0, 0.5])
    fused = fuse(weights, query, dense=np.array([0.0, 1.0]), domain=np.array([0.5, 1.0]))
    assert fused.tolist() == pytest.approx([(1.0 + 0.0 + 1.0) / 4, (0.5 + 1.0 + 2.0) / 4])


def test_a_clause_signal_lets_a_tool_for_a_short_part_of_the_request_rise() -> None:
    query = np.array([9.0, 3.0])
    clauses = [np.array([9.0, 0.0]), np.array([0.0, 3.0])]
    without = fuse(FusionWeights(query=1.0, clause=0.0), query, clauses)
    with_clauses = fuse(FusionWeights(query=1.0, clause=1.0), query, clauses)
    assert without[1] / without[0] < with_clauses[1] / with_clauses[0]


def test_negative_weights_are_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        FusionWeights(clause=-1.0)
