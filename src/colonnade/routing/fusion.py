"""Weighted fusion of the index's signals into one score per tool.

Signals: BM25F of the whole query; BM25F of each clause of the query (a tool needs to fit only
one part of a multi-step request); dense similarity of the query and its clauses, when a model is
installed (`dense.py`); and the score of the tool's API as a whole (`domains.py`). Each is scaled
to [0, 1] for the query, then combined with fixed weights. Plain reciprocal-rank fusion treats a
weak signal's ranks like a strong one's and loses to BM25 alone on Seal-Tools; scaled scores keep
the margins. The weights in use are the tuned ones of `tuned.py`.
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
    """How much each scaled signal counts; `clause` applies to the best clause of the query,
    `dense` to the embedding similarity (ignored without a model), `domain` to the tool's API."""

    query: float = 1.0
    clause: float = 1.0
    dense: float = 0.0
    domain: float = 0.0

    def __post_init__(self) -> None:
        if min(self.query, self.clause, self.dense, self.domain) < 0:
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


def fuse(
    weights: FusionWeights,
    query: FloatArray,
    clauses: Sequence[FloatArray] = (),
    dense: FloatArray | None = None,
    domain: FloatArray | None = None,
) -> FloatArray:
    """The weighted sum of the scaled signals given, divided by the sum of their weights (so the
    result stays within [0, 1]). `dense` and `domain` are taken as already scaled."""
    total = weights.query * scaled(query)
    ceiling = weights.query
    if weights.clause and clauses:
        total = total + weights.clause * best_of(clauses, len(query))
        ceiling += weights.clause
    if weights.dense and dense is not None:
        total = total + weights.dense * dense
        ceiling += weights.dense
    if weights.domain and domain is not None:
        total = total + weights.domain * domain
        ceiling += weights.domain
    return total / ceiling if ceiling > 0 else total
