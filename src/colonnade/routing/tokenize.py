"""Text to index terms: identifier splitting, lower-casing, stopwords and English stemming.

Tool names are identifiers (`getWeatherForecast`, `list_open_issues`, `geo-code`, `fs.read`),
while queries are prose, so both go through one analyzer that splits identifiers into words
first: a query saying "weather forecast" then meets a tool named `getWeatherForecast`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import Stemmer
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

__all__ = [
    "DOCUMENT_STOPWORDS",
    "QUERY_STOPWORDS",
    "Analyzer",
    "split_identifier",
]

# Identifiers split at `_`, `-`, `.`, `/` and spaces, then at case changes: "getWeatherForecast" ->
# "get Weather Forecast", "HTTPServer" -> "HTTP Server", "getCO2Level" -> "get CO2 Level".
_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)
_LOWER_TO_UPPER = re.compile(r"(?<=[^\W_A-Z])(?=[A-Z])", re.UNICODE)
_ACRONYM_END = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")
# Ideographs carry a word each; splitting them lets a CJK description match a CJK query word.
_IDEOGRAPH = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Memoised stems are bounded so odd input (ids, hashes) cannot grow the cache without limit.
_STEM_CACHE_LIMIT = 200_000

# Function words removed from tool text and queries alike (the bm25s English list).
DOCUMENT_STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN)

# Queries are requests written to an assistant: pronouns, auxiliaries and politeness carry no
# evidence about which tool fits, so they are dropped from queries only (tool text keeps them,
# where a word like "can" never decides a ranking anyway).
QUERY_STOPWORDS: frozenset[str] = DOCUMENT_STOPWORDS | frozenset(STOPWORDS_EN_PLUS) | frozenset(
    {
        "additionally", "also", "assist", "could", "finally", "help", "hello", "hi", "kindly",
        "let", "like", "lastly", "may", "might", "must", "need", "needs", "please", "shall",
        "thank", "thanks", "want", "wants", "wish", "would",
    }
)  # fmt: skip


def split_identifier(text: str) -> list[str]:
    """Words of `text` with identifiers split: camelCase, PascalCase, snake_case, kebab-case, dots.

    Case is preserved so callers can see the split; `Analyzer` lower-cases afterwards.
    """
    words: list[str] = []
    for chunk in _SEPARATORS.split(text):
        if not chunk:
            continue
        if chunk.isascii() and (chunk.islower() or chunk[1:].islower() or chunk.isdigit()):
            words.append(chunk)  # the common case, "forecast" or "Weather": nothing to split
            continue
        spaced = _ACRONYM_END.sub(" ", _LOWER_TO_UPPER.sub(" ", chunk))
        for word in spaced.split(" "):
            words.extend(_split_ideographs(word) if _IDEOGRAPH.search(word) else (word,))
    return words


def _split_ideographs(word: str) -> list[str]:
    pieces: list[str] = []
    rest = ""
    for char in word:
        if _IDEOGRAPH.match(char):
            if rest:
                pieces.append(rest)
                rest = ""
            pieces.append(char)
        else:
            rest += char
    if rest:
        pieces.append(rest)
    return pieces


class Analyzer:
    """Turns text into stemmed index terms; one instance is shared by documents and queries.

    Stems are memoised per surface word: tool text repeats a small vocabulary, so the Snowball
    stemmer runs once per distinct word instead of once per occurrence.
    """

    __slots__ = ("_stemmer", "_stems")

    def __init__(self, language: str = "english") -> None:
        self._stemmer = Stemmer.Stemmer(language)
        self._stems: dict[str, str] = {}

    def terms(self, text: str, stopwords: frozenset[str] = DOCUMENT_STOPWORDS) -> list[str]:
        """Stemmed terms of `text` in order, without `stopwords` (compared before stemming)."""
        return [stem for _, stem in self.words(text, stopwords)]

    def query_terms(self, text: str) -> list[str]:
        """Terms of a query: like `terms`, with the request boilerplate of `QUERY_STOPWORDS` removed."""
        return self.terms(text, QUERY_STOPWORDS)

    def words(self, text: str, stopwords: frozenset[str] = DOCUMENT_STOPWORDS) -> list[tuple[str, str]]:
        """(lower-cased word, stem) pairs of `text`: the stem is indexed, the word is shown to people."""
        words = [w.lower() for w in split_identifier(text)]
        kept = [w for w in words if w not in stopwords]
        return list(zip(kept, self._stem_all(kept), strict=True))

    def _stem_all(self, words: Iterable[str]) -> list[str]:
        stems = self._stems
        out: list[str] = []
        for word in words:
            stem = stems.get(word)
            if stem is None:
                stem = self._stemmer.stemWord(word)
                if len(stems) < _STEM_CACHE_LIMIT:
                    stems[word] = stem
            out.append(stem)
        return out
