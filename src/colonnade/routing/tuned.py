"""Retrieval parameters tuned on the public dev splits, and only on them.

Obtained with `.venv/bin/python bench/routing_eval.py --tune`: a grid of 324 points over k1, the
name and server field weights, the clause weight and the synonym weight (the other values set by
hand), scored by the mean of nDCG@10 on Seal-Tools dev (616 queries, 4,076 tools) and LiveMCPBench
dev (28 queries, 527 tools). The held-out splits were never used. The best points tie within 0.1
nDCG for clause weights 1.5 to 3 (k1 2, name 3, server 1, synonyms 0.3); the middle of that
plateau is kept. Few, shared parameters on purpose: LiveMCPBench's 28 queries are too few to fit
more without fitting noise.
"""

from __future__ import annotations

from colonnade.routing.fusion import FusionWeights

__all__ = [
    "TUNED_B",
    "TUNED_FIELD_WEIGHTS",
    "TUNED_FUSION",
    "TUNED_K1",
    "TUNED_SYNONYM_WEIGHT",
    "TUNED_WRITE_RULE",
]

TUNED_K1 = 2.0
# Per field of `documents.FIELDS`: name, summary+intent, description, params, server, tags.
TUNED_FIELD_WEIGHTS: tuple[float, ...] = (3.0, 1.5, 1.0, 0.5, 1.0, 0.3)
TUNED_B: tuple[float, ...] = (0.5, 0.75, 0.75, 0.75, 0.5, 0.5)
TUNED_FUSION = FusionWeights(query=1.0, clause=2.0)
TUNED_SYNONYM_WEIGHT = 0.3
TUNED_WRITE_RULE = True
