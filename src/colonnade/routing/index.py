"""`ToolIndex`: find the tools that fit a request among thousands, and keep up as tools change.

A query is cleaned (URLs, paths, addresses become words: `query.py`), expanded with a small
thesaurus, scored with field-weighted BM25 as a whole and clause by clause, and the two signals
are fused with tuned weights (`fusion.py`, `tuned.py`). Updates go to a small delta segment
folded into the main one past a threshold, so publishing or removing a tool costs about the size
of that tool, and rankings always equal those of a full rebuild.

There is no dense (embedding) signal: on the dev splits MiniLM sentence embeddings fused with
these scores gained under half an nDCG point at 15-30 ms a query (`bench/dense_probe.py`, which
uses `scores`); `Hit.dense` stays None.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from colonnade.errors import ColonnadeError
from colonnade.routing.documents import FIELDS, ToolDoc, field_texts
from colonnade.routing.fusion import FusionWeights, fuse
from colonnade.routing.lexical import Bm25Params, LexicalStore, Vocabulary
from colonnade.routing.query import normalize_references, split_clauses
from colonnade.routing.thesaurus import Thesaurus
from colonnade.routing.tokenize import QUERY_STOPWORDS, Analyzer
from colonnade.routing.tuned import TUNED_B, TUNED_FIELD_WEIGHTS, TUNED_FUSION, TUNED_K1, TUNED_SYNONYM_WEIGHT

__all__ = ["Hit", "IndexConfig", "IndexLoadError", "ToolIndex"]

FloatArray = npt.NDArray[np.float64]

_FORMAT = "colonnade-tool-index"
_FORMAT_VERSION = 1
# Bump when tokenisation changes: stored terms would no longer match analysed queries.
ANALYZER_VERSION = 1


class IndexLoadError(ColonnadeError):
    """A saved index cannot be used; rebuilding it from the catalog fixes it."""

    code = "S-TOOL-ROUTING-INDEX"

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot load the tool index {path}: {reason}; rebuild it from the catalog")
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """Retrieval parameters; the defaults are the tuned ones of `tuned.py`.

    `field_weights` and `field_b` follow `documents.FIELDS`: name, summary+intent, description,
    parameters, server, tags.
    """

    k1: float = TUNED_K1
    field_weights: tuple[float, ...] = TUNED_FIELD_WEIGHTS
    field_b: tuple[float, ...] = TUNED_B
    fusion: FusionWeights = TUNED_FUSION
    synonym_weight: float = TUNED_SYNONYM_WEIGHT
    max_clauses: int = 16
    delta_limit: int = 1024
    delta_ratio: float = 0.1

    def bm25(self) -> Bm25Params:
        if len(self.field_weights) != len(FIELDS):
            raise ValueError(f"field_weights needs {len(FIELDS)} entries ({', '.join(FIELDS)})")
        return Bm25Params(self.k1, self.field_weights, self.field_b)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    `score` is the fused score in [0, 1] (1: the best match for the whole request and for one of
    its clauses); `lexical` is the whole-query BM25F score relative to the best tool's (in [0, 1]);
    `matched_terms` are the query words (or thesaurus synonyms) found in the tool's text.
    """

    id: str
    score: float
    lexical: float | None
    dense: float | None
    matched_terms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Query:
    """A query analysed once: term ids with their counts, and the words behind each term."""

    term_ids: npt.NDArray[np.int64]
    weights: FloatArray
    words: dict[int, str]

    def weights_of(self, part: _Query) -> FloatArray:
        """`part`'s weights aligned on this query's terms (0 for terms `part` lacks).

        A clause's terms are a subset of its query's, so one gathering of postings serves both.
        """
        own = dict(zip(part.term_ids.tolist(), part.weights.tolist(), strict=True))
        return np.fromiter((own.get(t, 0.0) for t in self.term_ids.tolist()), np.float64, len(self.term_ids))


class ToolIndex:
    """Searchable tool documents keyed by id; `upsert` replaces a document with the same id.

    Not thread-safe: one task updates and searches it at a time (the gateway's event loop).
    """

    def __init__(self, config: IndexConfig | None = None) -> None:
        self.config = config or IndexConfig()
        self._analyzer = Analyzer()
        self._thesaurus = Thesaurus(self._analyzer)
        self._lexical = LexicalStore(self.config.bm25())
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}

    def configure(self, config: IndexConfig) -> None:
        """Switch to other retrieval parameters without re-indexing: stored data holds raw term
        counts, and every parameter applies at query time."""
        self._lexical.set_params(config.bm25())
        self.config = config

    # -- contents -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, id: object) -> bool:
        return id in self._row_of

    def ids(self) -> list[str]:
        """Ids of the indexed documents, sorted."""
        return sorted(self._row_of)

    def upsert(self, docs: Iterable[ToolDoc]) -> None:
        """Add documents, replacing any with the same id (the last one wins within `docs`)."""
        latest = {doc.id: doc for doc in docs}
        if not latest:
            return
        for tool_id in latest:
            self._remove_row(tool_id)
        analyze = self._analyzer.terms
        rows = self._lexical.add([[analyze(text) for text in field_texts(doc)] for doc in latest.values()])
        for tool_id, row in zip(latest, rows, strict=True):
            self._ids.append(tool_id)
            self._row_of[tool_id] = row
        self._maybe_compact()

    def remove(self, ids: Iterable[str]) -> None:
        """Remove documents by id; unknown ids are ignored."""
        for tool_id in ids:
            self._remove_row(tool_id)
        self._maybe_compact()

    def compact(self) -> None:
        """Fold pending changes into the main segment now (otherwise done past a threshold)."""
        old_rows = self._lexical.compact()
        self._ids = [self._ids[row] for row in old_rows]
        self._row_of = {tool_id: row for row, tool_id in enumerate(self._ids)}

    # -- persistence --------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the index to one `.npz` file (numpy arrays and a JSON header; no pickles).

        Pending changes are folded in first; the file is replaced atomically.
        """
        self.compact()
        header = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "analyzer": ANALYZER_VERSION,
            "fields": list(FIELDS),
            "ids": self._ids,
            "vocabulary": self._lexical.vocabulary.terms,
        }
        arrays: dict[str, Any] = dict(self._lexical.arrays())
        arrays["header"] = np.frombuffer(
            json.dumps(header, ensure_ascii=False).encode("utf-8"), dtype=np.uint8
        )
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        with partial.open("wb") as out:
            np.savez(out, **arrays)
        os.replace(partial, path)

    @classmethod
    def load(cls, path: Path, config: IndexConfig | None = None) -> ToolIndex:
        """An index saved by `save`; `config` (default: the current defaults) applies to queries."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in stored.files}
        except FileNotFoundError:
            raise IndexLoadError(path, "no such file") from None
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise IndexLoadError(path, f"not a saved tool index ({exc})") from None
        header = _read_header(path, arrays.pop("header", None))
        index = cls(config)
        vocabulary = Vocabulary(header["vocabulary"])
        try:
            index._lexical = LexicalStore.from_arrays(index.config.bm25(), vocabulary, arrays)
        except (KeyError, ValueError) as exc:
            raise IndexLoadError(path, f"inconsistent arrays ({exc})") from None
        ids = [str(i) for i in header["ids"]]
        if len(ids) != index._lexical.n_rows or len(set(ids)) != len(ids):
            raise IndexLoadError(path, "the stored ids do not match the stored rows")
        index._ids = ids
        index._row_of = {tool_id: row for row, tool_id in enumerate(ids)}
        return index

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, *, allowed: Collection[str] | None = None) -> list[Hit]:
        """The `k` best documents for `query`, best first, ties broken by id.

        `allowed` restricts candidates to those ids (e.g. what the caller may call); documents
        that match nothing in the query are never returned.
        """
        if k <= 0 or not self._row_of:
            return []
        whole, lexical, fused = self._score(query, allowed)
        best = float(lexical.max()) or 1.0
        rows = _top_rows(fused, k, self._ids)
        return [
            Hit(
                id=self._ids[row],
                score=float(fused[row]),
                lexical=float(lexical[row]) / best,
                dense=None,
                matched_terms=self._matched(row, whole),
            )
            for row in rows
        ]

    def scores(self, query: str) -> tuple[list[str], FloatArray]:
        """The fused score of every row for `query` (0: no match), and the id of each row.

        For experiments that weigh a signal of their own against the index's (bench/dense_probe.py);
        removed rows score 0.
        """
        if not self._row_of:
            return [], np.zeros(0, dtype=np.float64)
        _, _, fused = self._score(query, None)
        return list(self._ids), fused

    # -- internals ----------------------------------------------------------------------------
    def _score(self, query: str, allowed: Collection[str] | None) -> tuple[_Query, FloatArray, FloatArray]:
        """The analysed query, its whole-query BM25F scores and the fused scores, per row."""
        query = normalize_references(query)
        whole = self._analyse(query)
        matches = self._lexical.matches(whole.term_ids)
        lexical = self._lexical.accumulate(matches, whole.weights)
        clause_scores = [
            self._lexical.accumulate(matches, whole.weights_of(clause)) for clause in self._clauses(query)
        ]
        if allowed is not None:
            excluded = ~self._allowed_mask(allowed)
            for scores in (lexical, *clause_scores):
                scores[excluded] = 0.0
        weights = self.config.fusion
        fused = fuse(weights, lexical, clause_scores)
        ceiling = weights.query + (weights.clause if clause_scores else 0.0)
        if ceiling > 0:
            fused /= ceiling
        return whole, lexical, fused

    def _analyse(self, text: str) -> _Query:
        """Known query terms weighted by their count, plus thesaurus synonyms at `synonym_weight`."""
        pairs = self._analyzer.words(text, QUERY_STOPWORDS)
        vocabulary = self._lexical.vocabulary
        weights: dict[int, float] = {}
        words: dict[int, str] = {}
        for word, stem in pairs:
            tid = vocabulary.id_of(stem)
            if tid is not None:
                weights[tid] = weights.get(tid, 0.0) + 1.0
                words.setdefault(tid, word)
        synonym_weight = self.config.synonym_weight
        if synonym_weight > 0:
            for stem in dict.fromkeys(stem for _, stem in pairs):
                for synonym, word in self._thesaurus.synonyms(stem):
                    tid = vocabulary.id_of(synonym)
                    if tid is not None and tid not in weights:
                        weights[tid] = synonym_weight
                        words[tid] = word
        ids = np.fromiter(weights, dtype=np.int64, count=len(weights))
        return _Query(ids, np.fromiter(weights.values(), dtype=np.float64, count=len(weights)), words)

    def _clauses(self, query: str) -> list[_Query]:
        clauses = split_clauses(query)
        if len(clauses) < 2 or not self.config.fusion.clause:
            return []
        limit = max(self.config.max_clauses, 1)
        if len(clauses) > limit:
            clauses = [*clauses[: limit - 1], " ".join(clauses[limit - 1 :])]
        return [self._analyse(c) for c in clauses]

    def _allowed_mask(self, allowed: Collection[str]) -> npt.NDArray[np.bool_]:
        mask = np.zeros(self._lexical.n_rows, dtype=np.bool_)
        rows = [row for row in (self._row_of.get(i) for i in allowed) if row is not None]
        mask[rows] = True
        return mask

    def _matched(self, row: int, query: _Query) -> tuple[str, ...]:
        present = set(self._lexical.row_terms(row).tolist())
        return tuple(query.words[t] for t in query.term_ids.tolist() if t in present)

    def _remove_row(self, tool_id: str) -> None:
        row = self._row_of.pop(tool_id, None)
        if row is not None:
            self._lexical.remove(row)

    def _maybe_compact(self) -> None:
        store = self._lexical
        limit = max(self.config.delta_limit, int(self.config.delta_ratio * store.main.n_rows))
        if store.n_delta > limit or store.n_removed > limit:
            self.compact()


def _read_header(path: Path, raw: npt.NDArray[np.generic] | None) -> dict[str, Any]:
    if raw is None:
        raise IndexLoadError(path, "no header (not written by ToolIndex.save)")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise IndexLoadError(path, "unreadable header") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise IndexLoadError(path, "not a saved tool index")
    if header.get("version") != _FORMAT_VERSION or header.get("analyzer") != ANALYZER_VERSION:
        raise IndexLoadError(path, "written by another version of Colonnade")
    if header.get("fields") != list(FIELDS):
        raise IndexLoadError(path, f"indexed fields {header.get('fields')} differ from {list(FIELDS)}")
    if not isinstance(header.get("ids"), list) or not isinstance(header.get("vocabulary"), list):
        raise IndexLoadError(path, "header lacks ids or vocabulary")
    return header


def _top_rows(scores: FloatArray, k: int, ids: Sequence[str]) -> list[int]:
    """Rows of the `k` best positive scores, ties broken by id (so results never depend on row order)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > k:
        kth = np.partition(scores[positive], len(positive) - k)[len(positive) - k]
        positive = positive[scores[positive] >= kth]
    ranked = sorted(positive.tolist(), key=lambda row: (-scores[row], ids[row]))
    return ranked[:k]
