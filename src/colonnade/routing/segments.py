"""`Segment`: immutable postings of a contiguous range of index rows.

A segment stores raw per-field term counts, never scores: BM25 statistics (document
frequencies, average field lengths) are applied at query time, so adding a small segment or
masking a removed row leaves every other segment valid and rankings equal to a full rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["DocTerms", "Gathered", "Segment"]

IntArray = npt.NDArray[np.int64]
CountArray = npt.NDArray[np.uint8]

# Counts are stored as uint8: a word repeated more than 255 times in one field of a tool adds
# nothing BM25's saturation would notice.
_MAX_COUNT = 255


@dataclass(frozen=True, slots=True)
class DocTerms:
    """One document's distinct term ids (ascending) and their count in each field."""

    terms: IntArray  # shape (T,)
    counts: CountArray  # shape (T, F)
    lengths: IntArray  # shape (F,): terms per field, repeats included

    @classmethod
    def from_fields(cls, field_term_ids: Sequence[Sequence[int]]) -> DocTerms:
        n_fields = len(field_term_ids)
        lengths = np.array([len(ids) for ids in field_term_ids], dtype=np.int64)
        flat = np.fromiter(
            (t for ids in field_term_ids for t in ids), dtype=np.int64, count=int(lengths.sum())
        )
        field = np.repeat(np.arange(n_fields, dtype=np.int64), lengths)
        terms, inverse = np.unique(flat, return_inverse=True)
        counts = np.zeros((len(terms), n_fields), dtype=np.int64)
        np.add.at(counts, (inverse, field), 1)
        return cls(terms, np.minimum(counts, _MAX_COUNT).astype(np.uint8), lengths)


@dataclass(frozen=True, slots=True)
class Gathered:
    """The postings of some query terms: one entry per (term, row) pair, in query-term order."""

    rows: IntArray
    counts: CountArray
    term_index: IntArray  # position of the posting's term in the query


class Segment:
    """Postings of rows `start .. start + n_rows - 1`, kept in both orders.

    Row-major arrays (`row_ptr`, `terms`, `counts`) answer "which terms has this row" (needed
    when a row is removed or explained); the term-major permutation answers queries.
    """

    __slots__ = ("_order", "_posting_row", "counts", "n_rows", "row_ptr", "start", "term_ptr", "terms")

    def __init__(self, start: int, row_ptr: IntArray, terms: IntArray, counts: CountArray) -> None:
        self.start = start
        self.n_rows = len(row_ptr) - 1
        self.row_ptr = row_ptr
        self.terms = terms
        self.counts = counts
        self._posting_row = np.repeat(np.arange(start, start + self.n_rows, dtype=np.int64), np.diff(row_ptr))
        # Stable sort keeps rows ascending within each term, so gathering is deterministic.
        self._order = np.argsort(terms, kind="stable")
        n_terms = int(terms.max()) + 1 if len(terms) else 0
        self.term_ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=self.term_ptr[1:])

    @classmethod
    def from_docs(cls, start: int, docs: Sequence[DocTerms], n_fields: int) -> Segment:
        sizes = np.array([len(d.terms) for d in docs], dtype=np.int64)
        row_ptr = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(sizes, out=row_ptr[1:])
        if docs:
            terms = np.concatenate([d.terms for d in docs])
            counts = np.concatenate([d.counts for d in docs])
        else:
            terms = np.zeros(0, dtype=np.int64)
            counts = np.zeros((0, n_fields), dtype=np.uint8)
        return cls(start, row_ptr, terms, counts)

    @classmethod
    def merge(cls, parts: Sequence[Segment], keep: npt.NDArray[np.bool_], n_fields: int) -> Segment:
        """One segment from row 0 with the rows of `parts` where `keep[row]`, renumbered in order."""
        terms: list[IntArray] = []
        counts: list[CountArray] = []
        sizes: list[IntArray] = []
        for part in parts:
            kept_rows = keep[part.start : part.start + part.n_rows]
            kept_postings = kept_rows[part._posting_row - part.start]
            terms.append(part.terms[kept_postings])
            counts.append(part.counts[kept_postings])
            sizes.append(np.diff(part.row_ptr)[kept_rows])
        all_sizes = np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)
        row_ptr = np.zeros(len(all_sizes) + 1, dtype=np.int64)
        np.cumsum(all_sizes, out=row_ptr[1:])
        if not terms:
            return cls(0, row_ptr, np.zeros(0, dtype=np.int64), np.zeros((0, n_fields), dtype=np.uint8))
        return cls(0, row_ptr, np.concatenate(terms), np.concatenate(counts))

    def row_terms(self, row: int) -> IntArray:
        local = row - self.start
        return self.terms[self.row_ptr[local] : self.row_ptr[local + 1]]

    def row_counts(self, row: int) -> CountArray:
        local = row - self.start
        return self.counts[self.row_ptr[local] : self.row_ptr[local + 1]]

    def gather(self, query_terms: IntArray) -> Gathered:
        """Postings of `query_terms` (terms unknown to this segment have none)."""
        known = query_terms < len(self.term_ptr) - 1
        starts = np.where(known, self.term_ptr[np.minimum(query_terms, len(self.term_ptr) - 1)], 0)
        ends = np.where(known, self.term_ptr[np.minimum(query_terms + 1, len(self.term_ptr) - 1)], 0)
        lengths = ends - starts
        total = int(lengths.sum())
        if total == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Gathered(empty, self.counts[:0], empty)
        # Positions starts[i] .. ends[i]-1 for every term i, concatenated without a Python loop.
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        positions = self._order[np.arange(total, dtype=np.int64) + offsets]
        return Gathered(
            self._posting_row[positions],
            self.counts[positions],
            np.repeat(np.arange(len(query_terms), dtype=np.int64), lengths),
        )
