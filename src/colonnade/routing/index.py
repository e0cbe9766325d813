"""`ToolIndex`: find the tools that fit a request among thousands, and keep up as tools change.

A query is cleaned (URLs, paths, addresses become words: `query.py`), expanded with a small
thesaurus, scored with field-weighted BM25 as a whole and clause by clause, scored by the APIs
it is about (`domains.py`) and, when a static embedding model is installed, by dense similarity
of the query and all its clauses in one batch (`dense.py`); the signals are fused with weights
chosen by cross-validation on the dev splits (`fusion.py`, `tuned.py`). Tool vectors are computed
when a tool is indexed and saved with the index, never per query. Updates go to a small delta
segment folded into the main one past a threshold, so publishing or removing a tool costs about
the size of that tool, and rankings always equal those of a full rebuild.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from colonnade.errors import ColonnadeError
from colonnade.routing.dense import Embedder, load_embedder, normalized_similarity
from colonnade.routing.documents import FIELDS, ToolDoc, dense_text, field_texts
from colonnade.routing.domains import DomainIndex
from colonnade.routing.fusion import FusionWeights, best_of, fuse, scaled
from colonnade.routing.lexical import Bm25Params, LexicalStore, Vocabulary
from colonnade.routing.query import normalize_references, split_clauses
from colonnade.routing.thesaurus import Thesaurus
from colonnade.routing.tokenize import QUERY_STOPWORDS, Analyzer
from colonnade.routing.tuned import (
    TUNED_B,
    TUNED_FIELD_WEIGHTS,
    TUNED_FUSION,
    TUNED_K1,
    TUNED_SYNONYM_WEIGHT,
    TUNED_WRITE_RULE,
)
from colonnade.routing.vectors import ToolVectors

__all__ = ["Hit", "IndexConfig", "IndexLoadError", "Signals", "ToolIndex"]

FloatArray = npt.NDArray[np.float64]

_FORMAT = "colonnade-tool-index"
_FORMAT_VERSION = 2
# Bump when tokenisation changes: stored terms would no longer match analysed queries.
ANALYZER_VERSION = 1
_SERVER_FIELD, _TAGS_FIELD = FIELDS.index("server"), FIELDS.index("tags")


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
    parameters, server, tags. `dense` uses the installed embedding model (`dense.py`) when there
    is one and `fusion.dense` is above 0; `write_rule` adds "write" for a file the request saves
    to (`query.normalize_references`).
    """

    k1: float = TUNED_K1
    field_weights: tuple[float, ...] = TUNED_FIELD_WEIGHTS
    field_b: tuple[float, ...] = TUNED_B
    fusion: FusionWeights = TUNED_FUSION
    synonym_weight: float = TUNED_SYNONYM_WEIGHT
    write_rule: bool = TUNED_WRITE_RULE
    dense: bool = True
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

    `score` is the fused score in [0, 1] (1: the best match by every signal); `lexical` is the
    whole-query BM25F score relative to the best tool's (in [0, 1]); `dense` the scaled embedding
    similarity (None without a model); `domain` how well the tool's API as a whole fits the request
    relative to the best API; `matched_terms` are the query words (or thesaurus synonyms) found in
    the tool's text.
    """

    id: str
    score: float
    lexical: float | None
    dense: float | None
    matched_terms: tuple[str, ...] = ()
    domain: float = 0.0


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


@dataclass(frozen=True, slots=True)
class Signals:
    """Every signal of one query, per row, each scaled to [0, 1] as `fuse` takes it.

    `clause` is None for a request of one clause, `dense` without a model, `domain` when its
    weight is 0. For experiments that weigh the signals afresh (bench/routing_eval.py).
    """

    lexical: FloatArray
    clause: FloatArray | None
    dense: FloatArray | None
    domain: FloatArray | None


@dataclass(frozen=True, slots=True)
class _Scored:
    query: _Query
    lexical: FloatArray
    fused: FloatArray
    dense: FloatArray | None
    domains: dict[str, float]
    clause_scores: list[FloatArray]
    domain: FloatArray | None

    def signals(self) -> Signals:
        clauses = self.clause_scores
        clause = best_of(clauses, len(self.lexical)) if clauses else None
        return Signals(scaled(self.lexical), clause, self.dense, self.domain)


class ToolIndex:
    """Searchable tool documents keyed by id; `upsert` replaces a document with the same id.

    Not thread-safe: one task updates and searches it at a time (the gateway's event loop).
    """

    def __init__(self, config: IndexConfig | None = None, *, embedder: Embedder | None = None) -> None:
        """`embedder` defaults to the installed static model when `config.dense` (None without one)."""
        self.config = config or IndexConfig()
        self._analyzer = Analyzer()
        self._thesaurus = Thesaurus(self._analyzer)
        self._lexical = LexicalStore(self.config.bm25())
        self._domains = DomainIndex(self._lexical.vocabulary)
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._apis: list[str] = []  # the API (server) of each row
        self._row_api: npt.NDArray[np.int64] | None = None  # `_apis` as numbers, built when needed
        self._api_numbers: dict[str, int] = {}
        self.embedder: Embedder | None = (
            embedder if embedder is not None else (load_embedder() if self.config.dense else None)
        )
        # One quantized vector per row (`vectors.py`), exactly what is saved.
        self._vectors = ToolVectors(self.embedder.dim if self.embedder else 0)

    def configure(self, config: IndexConfig) -> None:
        """Switch to other retrieval parameters without re-indexing: stored data holds raw term
        counts and tool vectors, and every parameter applies at query time."""
        self._lexical.set_params(config.bm25())
        self.config = config

    @property
    def dense_active(self) -> bool:
        """Whether queries use the dense signal (a model is loaded and its weight is above 0)."""
        return self.embedder is not None and self.config.dense and self.config.fusion.dense > 0

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
        fields = [[analyze(text) for text in field_texts(doc)] for doc in latest.values()]
        rows = self._lexical.add(fields)
        for (tool_id, doc), row, terms in zip(latest.items(), rows, fields, strict=True):
            self._ids.append(tool_id)
            self._apis.append(doc.server)
            self._row_of[tool_id] = row
            self._domains.add(tool_id, doc.server, [*terms[_SERVER_FIELD], *terms[_TAGS_FIELD]], terms[0])
        if self.embedder is not None:
            self._vectors.append(self.embedder.embed([dense_text(doc) for doc in latest.values()]))
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
        self._apis = [self._apis[row] for row in old_rows]
        self._row_api = None
        self._row_of = {tool_id: row for row, tool_id in enumerate(self._ids)}
        if self.embedder is not None:
            self._vectors.take(old_rows)

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
            "apis": self._apis,
            "vocabulary": self._lexical.vocabulary.terms,
            "dense_model": self.embedder.model_id if self.embedder is not None else None,
        }
        arrays: dict[str, Any] = dict(self._lexical.arrays())
        if self.embedder is not None:
            arrays.update(self._vectors.arrays())
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
    def load(
        cls, path: Path, config: IndexConfig | None = None, *, embedder: Embedder | None = None
    ) -> ToolIndex:
        """An index saved by `save`; `config` (default: the current defaults) applies to queries.

        An index saved with another dense model than the one in use now (or with none) cannot be
        loaded: its tool vectors would not match the queries', so it is rebuilt instead.
        """
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in stored.files}
        except FileNotFoundError:
            raise IndexLoadError(path, "no such file") from None
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise IndexLoadError(path, f"not a saved tool index ({exc})") from None
        header = _read_header(path, arrays.pop("header", None))
        index = cls(config, embedder=embedder)
        model = index.embedder.model_id if index.embedder is not None else None
        if header.get("dense_model") != model:
            raise IndexLoadError(path, f"saved with dense model {header.get('dense_model')}, now {model}")
        vocabulary = Vocabulary(header["vocabulary"])
        try:
            index._lexical = LexicalStore.from_arrays(index.config.bm25(), vocabulary, arrays)
        except (KeyError, ValueError) as exc:
            raise IndexLoadError(path, f"inconsistent arrays ({exc})") from None
        ids = [str(i) for i in header["ids"]]
        apis = [str(a) for a in header.get("apis", ())]
        if len(ids) != index._lexical.n_rows or len(set(ids)) != len(ids) or len(apis) != len(ids):
            raise IndexLoadError(path, "the stored ids do not match the stored rows")
        if index.embedder is not None:
            vectors = ToolVectors.from_arrays(index.embedder.dim, arrays)
            if vectors is None or len(vectors) != len(ids):
                raise IndexLoadError(path, "the stored tool vectors do not match the stored rows")
            index._vectors = vectors
        index._ids = ids
        index._apis = apis
        index._row_of = {tool_id: row for row, tool_id in enumerate(ids)}
        index._domains = DomainIndex(vocabulary)
        index._restore_domains()
        return index

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, *, allowed: Collection[str] | None = None) -> list[Hit]:
        """The `k` best documents for `query`, best first, ties broken by id.

        `allowed` restricts candidates to those ids (e.g. what the caller may call); documents
        that score 0 (no query word, no dense similarity above the catalog's mean) are never
        returned.
        """
        if k <= 0 or not self._row_of:
            return []
        scored = self._score(query, allowed)
        lexical, fused, dense = scored.lexical, scored.fused, scored.dense
        best = float(lexical.max()) or 1.0
        rows = _top_rows(fused, k, self._ids)
        return [
            Hit(
                id=self._ids[row],
                score=float(fused[row]),
                lexical=float(lexical[row]) / best,
                dense=None if dense is None else float(dense[row]),
                matched_terms=self._matched(row, scored.query),
                domain=scored.domains.get(self._apis[row], 0.0),
            )
            for row in rows
        ]

    def domains(self, query: str) -> dict[str, float]:
        """The APIs `query` is about: API -> score relative to the best API (in (0, 1])."""
        whole = self._analyse(normalize_references(query, write_rule=self.config.write_rule))
        return self._domains.scores(whole.term_ids, whole.weights)

    def scores(self, query: str) -> tuple[list[str], FloatArray]:
        """The fused score of every row for `query` (0: no match), and the id of each row.

        For experiments that weigh a signal of their own against the index's (bench/dense_probe.py);
        removed rows score 0.
        """
        if not self._row_of:
            return [], np.zeros(0, dtype=np.float64)
        return list(self._ids), self._score(query, None).fused

    def signals(self, query: str) -> tuple[list[str], Signals]:
        """Each signal of `query` per row (what `scores` fuses), and the id of each row.

        Computes the dense signal whenever a model is loaded, and the domain signal always,
        whatever their weights, so that a bench can try weights without re-scoring.
        """
        config = self.config
        probe = replace(config, fusion=replace(config.fusion, dense=config.fusion.dense or 1.0,
                                                domain=config.fusion.domain or 1.0))  # fmt: skip
        self.config = probe
        try:
            signals = self._score(query, None).signals()
        finally:
            self.config = config
        return list(self._ids), signals

    # -- internals ----------------------------------------------------------------------------
    def _score(self, query: str, allowed: Collection[str] | None) -> _Scored:
        """The analysed query, its whole-query BM25F scores, dense scores, API scores and the
        fused scores, per row."""
        config = self.config
        query = normalize_references(query, write_rule=config.write_rule)
        whole = self._analyse(query)
        matches = self._lexical.matches(whole.term_ids)
        lexical = self._lexical.accumulate(matches, whole.weights)
        clause_texts = self._clause_texts(query)
        clauses = [self._analyse(c) for c in clause_texts] if config.fusion.clause else []
        clause_scores = [self._lexical.accumulate(matches, whole.weights_of(c)) for c in clauses]
        # A request that shares no word with the catalog is not understood: dense similarity
        # alone would rank noise (every string has subword vectors), so it returns nothing.
        dense = self._dense(query, clause_texts) if self.dense_active and len(whole.term_ids) else None
        domains: dict[str, float] = {}
        domain: FloatArray | None = None
        if config.fusion.domain:
            domains = self._domains.scores(whole.term_ids, whole.weights)
            domain = self._domain_signal(domains)
        if allowed is not None:
            excluded = ~self._allowed_mask(allowed)
            for scores in (lexical, *clause_scores, dense, domain):
                if scores is not None:
                    scores[excluded] = 0.0
        fused = fuse(config.fusion, lexical, clause_scores, dense, domain)
        return _Scored(whole, lexical, fused, dense, domains, clause_scores, domain)

    def _dense(self, query: str, clauses: list[str]) -> FloatArray:
        """Scaled similarity of each tool to the clause of the request it fits best (to the
        whole request when it has one clause); all clauses are embedded in one batch.

        The best clause, not the whole request: averaged over a long multi-step request, token
        vectors blur into its common words, while each step names one tool's job. (On the dev
        splits the whole-request similarity, alone or averaged in, lost to this.)
        """
        assert self.embedder is not None
        similarity = self._vectors.best_similarity(self.embedder.embed(clauses or [query]))
        live = np.flatnonzero(self._lexical.alive)
        dense = np.zeros(len(similarity), dtype=np.float64)
        dense[live] = normalized_similarity(similarity[live])
        return dense

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

    def _clause_texts(self, query: str) -> list[str]:
        """The clauses of a request of several (none for a one-clause request)."""
        clauses = split_clauses(query)
        if len(clauses) < 2:
            return []
        limit = max(self.config.max_clauses, 1)
        if len(clauses) > limit:
            clauses = [*clauses[: limit - 1], " ".join(clauses[limit - 1 :])]
        return clauses

    def _domain_signal(self, domains: dict[str, float]) -> FloatArray:
        """Each row's API score, gathered through a per-row API number (no loop over rows)."""
        if self._row_api is None or len(self._row_api) != len(self._apis):
            numbers: dict[str, int] = {}
            self._row_api = np.fromiter(
                (numbers.setdefault(api, len(numbers)) for api in self._apis), np.int64, len(self._apis)
            )
            self._api_numbers = numbers
        per_api = np.zeros(len(self._api_numbers) + 1, dtype=np.float64)
        for api, value in domains.items():
            number = self._api_numbers.get(api)
            if number is not None:
                per_api[number] = value
        domain: FloatArray = per_api[self._row_api]
        domain[~self._lexical.alive] = 0.0
        return domain

    def _restore_domains(self) -> None:
        """Rebuild the API documents from the stored postings (a loaded index has no documents)."""
        terms = self._lexical.vocabulary.terms
        for row, (tool_id, api) in enumerate(zip(self._ids, self._apis, strict=True)):
            ids, counts = self._lexical.row_postings(row)
            labels = _field_terms(terms, ids, counts[:, _SERVER_FIELD])
            labels += _field_terms(terms, ids, counts[:, _TAGS_FIELD])
            self._domains.add(tool_id, api, labels, _field_terms(terms, ids, counts[:, 0]))

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
            self._domains.remove((tool_id,))

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


def _field_terms(terms: list[str], ids: npt.NDArray[np.int64], counts: npt.NDArray[np.uint8]) -> list[str]:
    """A field's terms, each repeated as often as it occurs, from one row's stored postings."""
    return [terms[t] for t, n in zip(ids.tolist(), counts.tolist(), strict=True) for _ in range(n)]


def _top_rows(scores: FloatArray, k: int, ids: Sequence[str]) -> list[int]:
    """Rows of the `k` best positive scores, ties broken by id (so results never depend on row order)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > k:
        kth = np.partition(scores[positive], len(positive) - k)[len(positive) - k]
        positive = positive[scores[positive] >= kth]
    ranked = sorted(positive.tolist(), key=lambda row: (-scores[row], ids[row]))
    return ranked[:k]
