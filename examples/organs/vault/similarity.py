"""The vault's `similarity` sub-organ: which stored texts are most like a query (cosine of word counts).

A deliberately small method with no model to download: good enough to find "the note about the
invoice" among a few thousand blobs, and exact enough to test.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Annotated

from pydantic import BaseModel, Field

from colonnade.organs import FunctionOrgan, FunctionSlo, StimulusContext
from examples.organs.vault.blobs import store_for

__all__ = ["Match", "Matches", "similarity"]

_WORD = re.compile(r"[a-z0-9]+")

similarity = FunctionOrgan(
    "similarity",
    version="1.0.0",
    description="Finds the stored text blobs most similar to a query, by the words they share.",
    division="storage",
    subsystem="search",
    tags=["similarity-search", "text", "blobs"],
)


class Match(BaseModel):
    key: str
    score: float = Field(ge=0, le=1, description="Cosine similarity of word counts, 1 is identical.")
    preview: str = Field(description="The first 80 characters of the blob.")


class Matches(BaseModel):
    query: str
    matches: list[Match]


def _vector(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def _cosine(left: Counter[str], right: Counter[str]) -> float:
    dot = sum(count * right[word] for word, count in left.items())
    norm = math.sqrt(sum(c * c for c in left.values())) * math.sqrt(sum(c * c for c in right.values()))
    return dot / norm if norm else 0.0


@similarity.function(
    tags=["similarity", "search", "text"],
    examples=[
        {"description": "Notes about invoices", "input": {"query": "overdue invoice reminder", "k": 3}},
        {
            "description": "Only close matches",
            "input": {"query": "quarterly report", "min_score": 0.5},
            "output": {"query": "quarterly report", "matches": []},
        },
    ],
    side_effects=["read"],
    idempotent=True,
    slo=FunctionSlo(p95_latency_ms=200, max_error_rate=0.01, queue_cap=4),
)
def search(
    query: Annotated[
        str, Field(min_length=1, max_length=1000, description="Text to compare the blobs with.")
    ],
    context: StimulusContext,
    k: Annotated[int, Field(ge=1, le=50, description="How many matches at most.")] = 5,
    min_score: Annotated[float, Field(ge=0, le=1, description="Leave out matches scoring below this.")] = 0.0,
) -> Matches:
    """Find the stored text blobs most similar to a query (shared words, cosine), best first."""
    wanted = _vector(query)
    scored = [
        (_cosine(wanted, _vector(text)), key, text) for key, text in store_for(context.data_dir).texts()
    ]
    ranked = sorted((s for s in scored if s[0] > 0 and s[0] >= min_score), key=lambda s: (-s[0], s[1]))[:k]
    return Matches(
        query=query,
        matches=[Match(key=key, score=round(score, 4), preview=text[:80]) for score, key, text in ranked],
    )
