"""Field-weighted BM25 (BM25F) over segmented postings, updated in place as tools come and go.

Scores use Lucene's BM25 (the `bm25s` default: idf = ln(1 + (N - df + 0.5) / (df + 0.5))) with
per-field length normalisation and weights combined before saturation (BM25F), so a query word
found in a tool's name counts for more than the same word deep in a parameter description,
without letting any one field dominate. Corpus statistics are integers kept up to date on every
change and applied at query time: an index updated incrementally ranks exactly like one built
from scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from colonnade.routing.segments import CountArray, DocTerms, IntArray, Segment

__all__ = ["Bm25Params", "LexicalStore", "Matches", "Vocabulary"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Matches:
    """Postings of some query terms: row, BM25F value and query-term index of each."""

    rows: IntArray
    values: FloatArray
    term_index: IntArray


@dataclass(frozen=True, slots=True)
class Bm25Params:
    """BM25F parameters: saturation `k1`, and per field a weight and a length normalisation `b`."""

    k1: float
    field_weights: tuple[float, ...]
    field_b: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.field_weights) != len(self.field_b):
            raise ValueError("field_weights and field_b must have one entry per field")
        if (
            self.k1 <= 0
            or any(w < 0 for w in self.field_weights)
            or any(not 0 <= b <= 1 for b in self.field_b)
        ):
            raise ValueError("BM25 needs k1 > 0, field weights >= 0 and 0 <= b <= 1")

    @property
    def n_fields(self) -> int:
        return len(self.field_weights)


class Vocabulary:
    """Term <-> id; ids are dense and never reused, so stored postings stay valid as it grows."""

    __slots__ = ("_ids", "terms")

    def __init__(self, terms: Sequence[str] = ()) -> None:
        self.terms: list[str] = list(terms)
        self._ids: dict[str, int] = {t: i for i, t in enumerate(self.terms)}

    def __len__(self) -> int:
        return len(self.terms)

    def add(self, terms: Sequence[str]) -> list[int]:
        ids = self._ids
        out: list[int] = []
        for term in terms:
            tid = ids.get(term)
            if tid is None:
                tid = ids[term] = len(self.terms)
                self.terms.append(term)
            out.append(tid)
        return out

    def id_of(self, term: str) -> int | None:
        return self._ids.get(term)

    def lookup(self, terms: Sequence[str]) -> list[int]:
        """Ids of the known `terms`; unknown ones are skipped (no tool contains them)."""
        ids = self._ids
        return [tid for tid in (ids.get(t) for t in terms) if tid is not None]


class LexicalStore:
    """BM25F postings of numbered rows: a large main segment plus small delta segments.

    Rows are appended (`add`), masked (`remove`) and renumbered only by `compact`, which the
    owner calls when the delta or the removed rows grow past a threshold. Removed rows keep their
    postings until then but leave the statistics at once.
    """

    __slots__ = (
        "_alive",
        "_delta",
        "_delta_segment",
        "_df",
        "_length_sums",
        "_lengths",
        "_main",
        "_n_alive",
        "_norm_cache",
        "_queried_since_change",
        "_saturation_cache",
        "params",
        "vocabulary",
    )

    def __init__(self, params: Bm25Params, vocabulary: Vocabulary | None = None) -> None:
        self.params = params
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        f = params.n_fields
        self._main = Segment.from_docs(0, [], f)
        self._delta: list[DocTerms] = []
        self._delta_segment: Segment | None = None
        self._df = np.zeros(len(self.vocabulary), dtype=np.int64)
        self._lengths = np.zeros((0, f), dtype=np.int64)
        self._length_sums = np.zeros(f, dtype=np.int64)
        self._alive = np.zeros(0, dtype=np.bool_)
        self._n_alive = 0
        self._norm_cache: FloatArray | None = None
        self._saturation_cache: dict[int, tuple[Segment, FloatArray]] = {}
        self._queried_since_change = False

    # -- size ---------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return len(self._alive)

    @property
    def n_delta(self) -> int:
        return len(self._delta)

    @property
    def n_removed(self) -> int:
        return self.n_rows - self._n_alive

    @property
    def main(self) -> Segment:
        return self._main

    # -- updates ------------------------------------------------------------------------------
    def add(self, docs: Sequence[Sequence[Sequence[str]]]) -> list[int]:
        """Add documents, each given as the term list of every field; returns their new rows.

        They go to the delta segment, which is indexed lazily at the next query.
        """
        if not docs:
            return []
        parsed = []
        for field_terms in docs:
            if len(field_terms) != self.params.n_fields:
                raise ValueError(f"expected {self.params.n_fields} fields, got {len(field_terms)}")
            parsed.append(DocTerms.from_fields([self.vocabulary.add(terms) for terms in field_terms]))
        first = self.n_rows
        self._delta.extend(parsed)
        self._delta_segment = None
        self._grow_df()
        all_terms = np.concatenate([d.terms for d in parsed])
        self._df += np.bincount(all_terms, minlength=len(self._df))
        lengths = np.stack([d.lengths for d in parsed])
        self._lengths = np.concatenate([self._lengths, lengths])
        self._length_sums += lengths.sum(axis=0)
        self._alive = np.concatenate([self._alive, np.ones(len(parsed), dtype=np.bool_)])
        self._n_alive += len(parsed)
        self._forget_statistics()
        return list(range(first, first + len(parsed)))

    def remove(self, row: int) -> None:
        """Mask `row`: it stops matching and leaves the statistics."""
        if not self._alive[row]:
            return
        self._alive[row] = False
        self._n_alive -= 1
        self._df[self.row_terms(row)] -= 1
        self._length_sums -= self._lengths[row]
        self._forget_statistics()

    def compact(self) -> npt.NDArray[np.int64]:
        """Fold the delta into the main segment and drop removed rows.

        Returns the old row of each new row, so the owner can renumber what it keeps per row.
        """
        if not self._delta and self._n_alive == self.n_rows:
            return np.arange(self.n_rows, dtype=np.int64)
        keep = self._alive.copy()
        parts = [self._main, self._delta_view()]
        self._main = Segment.merge(parts, keep, self.params.n_fields)
        self._delta = []
        self._delta_segment = None
        old_rows = np.flatnonzero(keep)
        self._lengths = self._lengths[old_rows]
        self._alive = np.ones(len(old_rows), dtype=np.bool_)
        self._forget_statistics()
        return old_rows

    def set_params(self, params: Bm25Params) -> None:
        """Score with other BM25F parameters from now on (stored counts do not depend on them)."""
        if params.n_fields != self.params.n_fields:
            raise ValueError(f"expected parameters for {self.params.n_fields} fields, got {params.n_fields}")
        self.params = params
        self._forget_statistics()

    def _forget_statistics(self) -> None:
        self._norm_cache = None
        self._saturation_cache.clear()
        self._queried_since_change = False

    # -- queries ------------------------------------------------------------------------------
    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        """Per row, whether it is still indexed (not removed)."""
        return self._alive

    def row_terms(self, row: int) -> IntArray:
        if row < self._main.n_rows:
            return self._main.row_terms(row)
        return self._delta[row - self._main.n_rows].terms

    def row_postings(self, row: int) -> tuple[IntArray, CountArray]:
        """A row's distinct term ids and their count in each field (shape terms x fields)."""
        if row < self._main.n_rows:
            start, end = self._main.row_ptr[row], self._main.row_ptr[row + 1]
            return self._main.terms[start:end], self._main.counts[start:end]
        doc = self._delta[row - self._main.n_rows]
        return doc.terms, doc.counts

    def idf(self, term_ids: IntArray) -> FloatArray:
        df = self._df[term_ids].astype(np.float64)
        n = float(self._n_alive)
        return np.log1p((n - df + 0.5) / (df + 0.5))

    def matches(self, term_ids: IntArray) -> Matches:
        """Every posting of `term_ids`: its row and its BM25F value (idf x saturated field-weighted tf).

        Score several term weightings of one query (the whole query, each clause) with
        `accumulate` on one `Matches`, so postings are gathered once.
        """
        idf = self.idf(term_ids) if len(term_ids) else np.zeros(0, dtype=np.float64)
        rows: list[IntArray] = []
        values: list[FloatArray] = []
        term_index: list[IntArray] = []
        for segment in (self._main, self._delta_view()):
            if segment.n_rows == 0 or len(term_ids) == 0:
                continue
            positions, index = segment.positions(term_ids)
            rows.append(segment.term_rows[positions])
            values.append(self._saturation(segment, positions) * idf[index])
            term_index.append(index)
        self._queried_since_change = True
        if not rows:
            empty = np.zeros(0, dtype=np.int64)
            return Matches(empty, np.zeros(0, dtype=np.float64), empty)
        return Matches(np.concatenate(rows), np.concatenate(values), np.concatenate(term_index))

    def accumulate(self, matches: Matches, weights: FloatArray | None = None) -> FloatArray:
        """Per-row sums of `matches` values, each multiplied by the weight of its query term.

        Removed rows score 0. Each row's terms are added in query order whichever segment holds
        it (zero weights add exactly 0.0), so scores are bit-identical to a freshly built store's.
        """
        contributions = matches.values if weights is None else matches.values * weights[matches.term_index]
        scores = np.bincount(matches.rows, weights=contributions, minlength=self.n_rows).astype(
            np.float64, copy=False
        )
        scores[~self._alive] = 0.0
        return scores

    def scores(self, term_ids: IntArray, weights: FloatArray | None = None) -> FloatArray:
        """BM25F score of every row for the query terms `term_ids`, each weighted by `weights`."""
        return self.accumulate(self.matches(term_ids), weights)

    # -- persistence --------------------------------------------------------------------------
    def arrays(self) -> dict[str, npt.NDArray[np.generic]]:
        """The state to persist (call after `compact`: the delta is not included)."""
        if self._delta or self.n_removed:
            raise ValueError("compact the store before saving it")
        return {
            "lexical_row_ptr": self._main.row_ptr,
            "lexical_terms": self._main.terms,
            "lexical_counts": self._main.counts,
            "lexical_lengths": self._lengths,
        }

    @classmethod
    def from_arrays(
        cls, params: Bm25Params, vocabulary: Vocabulary, arrays: dict[str, npt.NDArray[np.generic]]
    ) -> LexicalStore:
        store = cls(params, vocabulary)
        row_ptr = np.asarray(arrays["lexical_row_ptr"], dtype=np.int64)
        terms = np.asarray(arrays["lexical_terms"], dtype=np.int64)
        counts = np.asarray(arrays["lexical_counts"], dtype=np.uint8)
        lengths = np.asarray(arrays["lexical_lengths"], dtype=np.int64)
        n_rows = len(row_ptr) - 1
        if counts.shape != (len(terms), params.n_fields) or lengths.shape != (n_rows, params.n_fields):
            raise ValueError("stored lexical arrays do not match the configured fields")
        if len(terms) and (terms.min() < 0 or terms.max() >= len(vocabulary)):
            raise ValueError("stored lexical terms are outside the stored vocabulary")
        store._main = Segment(0, row_ptr, terms, counts)
        store._df = np.bincount(terms, minlength=len(vocabulary)).astype(np.int64)
        store._lengths = lengths
        store._length_sums = lengths.sum(axis=0)
        store._alive = np.ones(n_rows, dtype=np.bool_)
        store._n_alive = n_rows
        return store

    # -- internals ----------------------------------------------------------------------------
    def _grow_df(self) -> None:
        missing = len(self.vocabulary) - len(self._df)
        if missing > 0:
            self._df = np.concatenate([self._df, np.zeros(missing, dtype=np.int64)])

    def _delta_view(self) -> Segment:
        if self._delta_segment is None:
            self._delta_segment = Segment.from_docs(self._main.n_rows, self._delta, self.params.n_fields)
        return self._delta_segment

    def _saturation(self, segment: Segment, positions: IntArray) -> FloatArray:
        """Saturated field-weighted tf of the term-major postings `positions` of `segment`.

        The first query after a change computes only its own postings, so a burst of changes
        between queries never pays for the whole index; the next query, statistics unchanged,
        computes every posting once and later queries only gather. Both paths run the same
        element-wise arithmetic, so they give identical values.
        """
        cached = self._saturation_cache.get(id(segment))
        if cached is not None and cached[0] is segment:
            return cached[1][positions]
        if not self._queried_since_change:
            return self._saturate(segment.term_counts[positions], segment.term_rows[positions])
        value = self._saturate(segment.term_counts, segment.term_rows)
        self._saturation_cache[id(segment)] = (segment, value)
        return value[positions]

    def _saturate(self, counts: CountArray, rows: IntArray) -> FloatArray:
        norms = self._field_norms()
        pseudo_tf = counts[:, 0] * norms[rows, 0]
        for f in range(1, self.params.n_fields):
            pseudo_tf += counts[:, f] * norms[rows, f]
        k1 = self.params.k1
        saturated: FloatArray = pseudo_tf * (k1 + 1.0) / (pseudo_tf + k1)
        return saturated

    def _field_norms(self) -> FloatArray:
        """weight_f / (1 - b_f + b_f * length / average length), per row and field."""
        if self._norm_cache is None:
            p = self.params
            averages = self._length_sums / max(self._n_alive, 1)
            ratio = self._lengths / np.where(averages > 0, averages, 1.0)
            b = np.asarray(p.field_b, dtype=np.float64)
            weights = np.asarray(p.field_weights, dtype=np.float64)
            self._norm_cache = weights / (1.0 - b + b * ratio)
        return self._norm_cache
