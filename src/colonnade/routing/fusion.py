"""Weighted fusion of the index's signals into one score per tool.

Signals: BM25F of the whole query, and BM25F of each clause of the query (a tool needs to fit only
one part of a multi-step request). Each is scaled to [0, 1] by its best value for the query, then
combined with fixed weights. Plain reciprocal-rank fusion treats a weak signal's ranks like a
strong one's and loses to BM25 alone on Seal-Tools; scaled scores keep the margins. The weights in
use are the tuned ones of `tuned.py`.
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
    clause: float = 1.0

    def __post_init__(self) -> None:
        if min(self.query, self.clause) < 0:
            raise ValueError("fusion weights must be >= 0")


def scaled(scores: FloatArray) -> FloatArray:
    """`scores` divided by their maximum (all zeros stay zeros)."""
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else scores


def best_of(clauses: Sequence[FloatArray], size: int) -> FloatArray:
    """Per row, the best scaled score over clauses."""
    if not clauses:
        return np.zeros(size, dtype=np.float64)
    best: FloatArray = np.maximum.reduce([scaled(c) for c in clauses])
    return best


def fuse(weights: FusionWeights, query: FloatArray, clauses: Sequence[FloatArray] = ()) -> FloatArray:
    """`query` weight x scaled whole-query scores + `clause` weight x best scaled clause scores."""
    total = weights.query * scaled(query)
    if weights.clause and clauses:
        total = total + weights.clause * best_of(clauses, len(query))
    return total
