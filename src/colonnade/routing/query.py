"""Queries split into clauses: a request that needs several tools usually asks for each in turn.

"Find the SLA of the compute service. Additionally, back up /home/data to the cloud." needs two
tools; scored as one bag of words, the tool matching the longer clause crowds out the other.
Scoring each clause on its own as well lets every part of the request bring its best tools.
"""

from __future__ import annotations

import re

__all__ = ["split_clauses"]

# A sentence ends at . ! ? ; or a line break followed by space (so "4.5", "e.g.x" and paths stay whole).
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# Within a sentence, a new request often starts after one of these linking words.
_LINKS = re.compile(
    r",?\s+(?:and then|after that|afterwards|then|additionally|also|finally|as well as|and)\s+(?=\S)",
    re.IGNORECASE,
)
_MIN_WORDS = 3


def split_clauses(query: str, *, split_links: bool = True) -> list[str]:
    """The clauses of `query` in order; a query of one clause gives a one-item list.

    Clauses shorter than three words are merged into the previous one: "Thanks." or "and the
    date" says too little on its own to retrieve anything.
    """
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(query):
        parts = _LINKS.split(sentence) if split_links else [sentence]
        pieces.extend(p.strip() for p in parts if p and p.strip())
    clauses: list[str] = []
    for piece in pieces:
        if clauses and len(piece.split()) < _MIN_WORDS:
            clauses[-1] = f"{clauses[-1]} {piece}"
        else:
            clauses.append(piece)
    if clauses and len(clauses) > 1 and len(clauses[0].split()) < _MIN_WORDS:
        clauses[1] = f"{clauses[0]} {clauses[1]}"
        del clauses[0]
    return clauses or [query]
