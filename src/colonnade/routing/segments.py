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

__all__ = ["DocTerms", "Segment"]

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


class Segment:
    """Postings of rows `start .. start + n_rows - 1`, kept in both orders.

    Row-major arrays (`row_ptr`, `terms`, `counts`) answer "which terms has this row" (needed
    when a row is removed, explained, merged or saved); term-major arrays (`term_ptr`,
    `term_rows`, `term_counts`) answer queries with contiguous slices.
    """

    __slots__ = ("counts", "n_rows", "row_ptr", "start", "term_counts", "term_ptr", "term_rows", "terms")

    def __init__(self, start: int, row_ptr: IntArray, terms: IntArray, counts: CountArray) -> None:
        self.start = start
        self.n_rows = len(row_ptr) - 1
        self.row_ptr = row_ptr
        self.terms = terms
        self.counts = counts
        posting_row = np.repeat(np.arange(start, start + self.n_rows, dtype=np.int64), np.diff(row_ptr))
        # A stable sort keeps rows ascending within each term, so gathering is deterministic.
        order = np.argsort(terms, kind="stable")
        self.term_rows = posting_row[order]
        self.term_counts = counts[order]
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
            sizes_here = np.diff(part.row_ptr)
            kept_rows = keep[part.start : part.start + part.n_rows]
            kept_postings = np.repeat(kept_rows, sizes_here)
            terms.append(part.terms[kept_postings])
            counts.append(part.counts[kept_postings])
            sizes.append(sizes_here[kept_rows])
        all_sizes = np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)
        row_ptr = np.zeros(len(all_sizes) + 1, dtype=np.int64)
        np.cumsum(all_sizes, out=row_ptr[1:])
        if not terms:
            return cls(0, row_ptr, np.zeros(0, dtype=np.int64), np.zeros((0, n_fields), dtype=np.uint8))
        return cls(0, row_ptr, np.concatenate(terms), np.concatenate(counts))

    def row_terms(self, row: int) -> IntArray:
        local = row - self.start
        return self.terms[self.row_ptr[local] : self.row_ptr[local + 1]]

    def positions(self, query_terms: IntArray) -> tuple[IntArray, IntArray]:
        """Term-major positions of the postings of `query_terms`, and the query index of each.

        Terms unknown to this segment have no postings.
        """
        last = len(self.term_ptr) - 1
        known = query_terms < last
        clipped = np.minimum(query_terms, last)
        starts = np.where(known, self.term_ptr[clipped], 0)
        lengths = np.where(known, self.term_ptr[np.minimum(clipped + 1, last)] - starts, 0)
        total = int(lengths.sum())
        # starts[i] .. starts[i] + lengths[i] - 1 for every term i, concatenated without a Python loop.
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        positions = np.arange(total, dtype=np.int64) + offsets
        return positions, np.repeat(np.arange(len(query_terms), dtype=np.int64), lengths)
