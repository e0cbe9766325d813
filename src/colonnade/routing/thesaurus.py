"""A small thesaurus of the actions and objects tool descriptions name in different words.

A user asks to "save the report", the tool says "write a file"; BM25 sees no shared word. Each
query word of a group below also searches for the other words of its group, at a reduced weight
(`IndexConfig.synonym_weight`), so an exact match still wins over a synonym. The groups are
generic API vocabulary, not drawn from any one catalog.
"""

from __future__ import annotations

from colonnade.routing.tokenize import Analyzer

__all__ = ["SYNONYM_GROUPS", "Thesaurus"]

SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("save", "write", "store"),
    ("get", "fetch", "retrieve", "obtain"),
    ("find", "search", "look", "lookup"),
    ("delete", "remove", "erase"),
    ("update", "modify", "edit", "change"),
    ("show", "display", "view"),
    ("create", "make", "generate", "new"),
    ("picture", "image", "photo"),
    ("price", "cost"),
    ("news", "headlines", "articles"),
)


class Thesaurus:
    """Stem -> (stem, word) of its synonyms, built with the index's analyzer so stems line up."""

    __slots__ = ("_synonyms",)

    def __init__(self, analyzer: Analyzer, groups: tuple[tuple[str, ...], ...] = SYNONYM_GROUPS) -> None:
        self._synonyms: dict[str, list[tuple[str, str]]] = {}
        for group in groups:
            stemmed = [(analyzer.terms(word, frozenset())[0], word) for word in group]
            for stem, _ in stemmed:
                others = [(s, w) for s, w in stemmed if s != stem]
                self._synonyms.setdefault(stem, []).extend(others)

    def synonyms(self, stem: str) -> list[tuple[str, str]]:
        return self._synonyms.get(stem, [])
