"""Weighted fusion of the index's signals into one score per tool.

Signals: BM25F of the whole query, BM25F of each clause of the query, and (with the `dense`
extra) cosine similarity of sentence embeddings. Each is scaled to [0, 1] by its best value for
the query, then combined with fixed weights. Plain reciprocal-rank fusion treats a weak signal's
ranks like a strong one's and loses to BM25 alone on Seal-Tools; scaled scores keep the margins.

The weights in use are the tuned ones of `tuned.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["FusionWeights", "best_of", "fuse", "scaled"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """How much each scaled signal counts; `clause` applies to the best clause of the query."""

    query: float = 1.0
    clause: float = 0.0
    dense: float = 0.0
    dense_clause: float = 0.0

    def __post_init__(self) -> None:
        if min(self.query, self.clause, self.dense, self.dense_clause) < 0:
            raise ValueError("fusion weights must be >= 0")


def scaled(scores: FloatArray) -> FloatArray:
    """`scores` divided by their maximum (all zeros stay zeros)."""
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else scores


def best_of(clauses: Sequence[FloatArray], size: int) -> FloatArray:
    """Per row, the best scaled score over clauses: a tool needs to fit only one part of the request."""
    if not clauses:
        return np.zeros(size, dtype=np.float64)
    return np.maximum.reduce([scaled(c) for c in clauses])


def fuse(
    weights: FusionWeights,
    query: FloatArray,
    clauses: Sequence[FloatArray] = (),
    dense: FloatArray | None = None,
    dense_clauses: Sequence[FloatArray] = (),
) -> FloatArray:
    """The weighted sum of the scaled signals that are present."""
    total = weights.query * scaled(query)
    if weights.clause and clauses:
        total = total + weights.clause * best_of(clauses, len(query))
    if dense is not None and weights.dense:
        total = total + weights.dense * scaled(np.maximum(dense, 0.0))
    if weights.dense_clause and dense_clauses:
        total = total + weights.dense_clause * best_of(
            [np.maximum(c, 0.0) for c in dense_clauses], len(query)
        )
    return total
