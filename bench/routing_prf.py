"""Pseudo-relevance feedback for the router, as a bench-only variant (issue 17, fourth pass).

The request's own ranking is taken as evidence: its `depth` best tools are assumed relevant and
the request is re-scored with what they share. Two forms, scored with the index's own parts so
that a zero feedback weight gives exactly the shipped signals:

- **dense Rocchio**: each clause vector of the request (what `ToolIndex._dense` embeds) gains
  `alpha` times the mean of the feedback tools' vectors, is renormalised and re-scored against
  every tool (best clause, measured from the catalog's mean, as shipped);
- **lexical RM3-style expansion**: a relevance model P(w|R) of the feedback tools (each tool's
  field-weighted term counts as a distribution, mixed by the tool's fused score), whose
  `TERMS` best terms join the whole-request BM25F query at `beta` times P(w|R) / max P(w|R)
  (a term already in the request gains that much weight).

No gold label is read here: feedback comes from the ranking alone. `routing_expand.py --prf`
grids `alpha`, `beta` and `depth` and cross-validates them; docs/routing.md has the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from colonnade.routing import ToolIndex
from colonnade.routing.dense import normalized_similarity
from colonnade.routing.query import normalize_references

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
TERMS = 10  # expansion terms taken from the relevance model (RM3's usual 10-20; fixed, not tuned)


@dataclass(frozen=True)
class Request:
    """One request analysed as the index analyses it: whole-request terms and clause vectors."""

    analysed: Any  # the index's `_Query`: term ids, weights
    clause_vectors: npt.NDArray[np.float32] | None  # None: no dense signal (no model, or no known word)


def analyse(index: ToolIndex, text: str) -> Request:
    """`text` as `ToolIndex._score` sees it."""
    text = normalize_references(text, write_rule=index.config.write_rule)
    analysed = index._analyse(text)
    vectors = None
    if index.embedder is not None and len(analysed.term_ids):
        vectors = index.embedder.embed(index._clause_texts(text) or [text])
    return Request(analysed, vectors)


def feedback_rows(total: FloatArray, depth: int) -> list[IntArray]:
    """Per request (row of `total`), its `depth` best rows with a positive score, best first."""
    top = np.argsort(-total, axis=1, kind="stable")[:, :depth]
    return [rows[total[q, rows] > 0] for q, rows in enumerate(top)]


def tool_vectors(index: ToolIndex) -> FloatArray:
    """Every row's vector as the index holds it (int8 codes times the row's step)."""
    vectors = index._vectors
    rows = len(vectors)
    decoded: FloatArray = vectors._codes[:rows].astype(np.float64) * vectors._steps[:rows, None]
    return decoded


def rocchio_dense(
    index: ToolIndex, request: Request, tools: FloatArray, rows: IntArray, alpha: float
) -> FloatArray:
    """The dense signal of `request` with each clause vector moved `alpha` times the mean of the
    feedback `rows`' vectors towards them (the shipped signal when there is no feedback)."""
    if request.clause_vectors is None:
        return np.zeros(len(tools), dtype=np.float64)
    moved = request.clause_vectors.astype(np.float64)
    if len(rows) and alpha:
        moved = moved + alpha * tools[rows].mean(axis=0)
    norms = np.linalg.norm(moved, axis=1, keepdims=True)
    unit = np.divide(moved, norms, out=np.zeros_like(moved), where=norms > 0).astype(np.float32)
    similarity = index._vectors.best_similarity(unit)
    live = np.flatnonzero(index._lexical.alive)
    dense = np.zeros(len(similarity), dtype=np.float64)
    dense[live] = normalized_similarity(similarity[live])
    return dense


def relevance_model(index: ToolIndex, rows: IntArray, weights: FloatArray) -> dict[int, float]:
    """P(w|R) over term ids: each feedback tool's field-weighted term distribution, mixed by
    `weights` (its fused score), the `TERMS` most probable terms only."""
    field_weights = np.asarray(index.config.field_weights, dtype=np.float64)
    model: dict[int, float] = {}
    total_weight = float(weights.sum())
    if not len(rows) or total_weight <= 0:
        return model
    for row, weight in zip(rows.tolist(), weights.tolist(), strict=True):
        terms, counts = index._lexical.row_postings(row)
        mass = counts.astype(np.float64) @ field_weights
        if mass.sum() <= 0:
            continue
        share = weight / total_weight / mass.sum()
        for term, value in zip(terms.tolist(), mass.tolist(), strict=True):
            model[term] = model.get(term, 0.0) + share * value
    best = sorted(model.items(), key=lambda item: (-item[1], item[0]))[:TERMS]
    return dict(best)


def rm3_lexical(
    index: ToolIndex, request: Request, rows: IntArray, weights: FloatArray, betas: tuple[float, ...]
) -> list[FloatArray]:
    """Per `beta`, the whole-request BM25F scores (scaled to [0, 1]) with the relevance model's
    terms added at `beta` times P(w|R) / max P(w|R); postings are gathered once for all betas."""
    query = request.analysed
    base = dict(zip(query.term_ids.tolist(), query.weights.tolist(), strict=True))
    model = relevance_model(index, rows, weights)
    top = max(model.values(), default=0.0)
    terms = np.fromiter(dict.fromkeys([*base, *model]), dtype=np.int64)
    original = np.array([base.get(t, 0.0) for t in terms.tolist()], dtype=np.float64)
    feedback = np.array([model.get(t, 0.0) / top if top else 0.0 for t in terms.tolist()], dtype=np.float64)
    matches = index._lexical.matches(terms)
    out = []
    for beta in betas:
        scores = index._lexical.accumulate(matches, original + beta * feedback)
        peak = float(scores.max()) if len(scores) else 0.0
        out.append(scores / peak if peak > 0 else scores)
    return out
