"""Tool vectors kept as small integers, so a query's similarities are one exact, short product.

The dense signal compares each clause of a request with every tool (at 4,000 tools and four
clauses, four million multiply-adds). Done clause by clause with `einsum`, numpy's own loop, it
took 0.6-0.75 ms of a dense search's 2.2 ms of CPU, which made the search outlast a scheduler
time slice (about 1 ms here): on a saturated machine it was then switched out and waited for a
core (docs/routing.md, latency under CPU contention). A BLAS product is
about five times faster, but was kept out for two reasons: a large product runs on BLAS's thread
pool, whose threads wait for free cores on a busy machine; and BLAS may add in an order that
depends on where a row lies, so an index updated in place could rank unlike one rebuilt.

Both are removed here:
- a tool vector is held as int8 codes in [-127, 127] times a per-row step (a quarter of float32's
  memory, and what is saved), a request vector as integer codes small enough that every dot
  product is an integer below 2^24, which float32 holds exactly whatever order it is summed in;
- the product runs in blocks of rows small enough that OpenBLAS keeps each on the calling thread
  (it threads products of more than 4 x 65,536 multiply-adds), each block's codes cast to
  float32 on the way, with at least two request columns (one column would go to the
  matrix-vector routine, threaded from far smaller sizes). numpy's wheels ship OpenBLAS; another
  BLAS has thresholds of its own, and the exactness holds whatever it does.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

__all__ = ["CODE_MAX", "ToolVectors", "block_rows", "quantize", "query_code_max"]

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]

CODE_MAX = 127  # tool components: int8
_EXACT = 2**24  # float32 holds every integer up to this exactly
# OpenBLAS runs a product of at most this many multiply-adds on the calling thread
# (SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c).
_ONE_THREAD_WORK = 4 * 65_536


def block_rows(dim: int, columns: int) -> int:
    """Rows per block of the product with `columns` request vectors: OpenBLAS runs a block on
    the calling thread when rows x dim x columns stays within `_ONE_THREAD_WORK`."""
    return max(1, _ONE_THREAD_WORK // (max(dim, 1) * max(columns, 1)))


def query_code_max(dim: int) -> int:
    """The largest request code whose products with tool codes sum exactly in float32."""
    return max(1, (_EXACT - 1) // (max(dim, 1) * CODE_MAX))


def quantize(
    vectors: npt.NDArray[np.floating], code_max: int = CODE_MAX
) -> tuple[Float32Array, Float32Array]:
    """Integer codes in [-code_max, code_max] (as float32) and the step of each row, so that
    `codes * step` approximates each row; a zero row gets zero codes and step 0.

    The vectors are first rounded to float16, the precision an index saved before these codes
    existed stored them in, so such a file converts to exactly the codes of a fresh index.
    """
    half = np.asarray(vectors, dtype=np.float16).astype(np.float64)
    peak = np.abs(half).max(axis=1) if half.size else np.zeros(len(half))
    step = (peak / code_max).astype(np.float32)
    safe = np.where(step > 0, step, 1.0).astype(np.float64)
    codes = np.clip(np.rint(half / safe[:, None]), -code_max, code_max).astype(np.float32)
    return codes, step


class ToolVectors:
    """One quantized vector per index row; grows by doubling; `best_similarity` scores a query."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._codes = np.zeros((0, dim), dtype=np.int8)
        self._steps = np.zeros(0, dtype=np.float32)
        self._rows = 0
        self._query_max = query_code_max(dim)

    def __len__(self) -> int:
        return self._rows

    def append(self, vectors: Float32Array) -> None:
        """Add the rows for newly indexed tools (unit vectors from the embedder)."""
        codes, steps = quantize(vectors)
        needed = self._rows + len(codes)
        if needed > len(self._codes):
            size = max(needed, 2 * len(self._codes))
            grown = np.zeros((size, self.dim), dtype=np.int8)
            grown[: self._rows] = self._codes[: self._rows]
            grown_steps = np.zeros(size, dtype=np.float32)
            grown_steps[: self._rows] = self._steps[: self._rows]
            self._codes, self._steps = grown, grown_steps
        self._codes[self._rows : needed] = codes
        self._steps[self._rows : needed] = steps
        self._rows = needed

    def take(self, rows: npt.NDArray[np.int64]) -> None:
        """Keep only `rows`, in that order (the index compacting its segments)."""
        self._codes = self._codes[rows]
        self._steps = self._steps[rows]
        self._rows = len(rows)

    def best_similarity(self, queries: Float32Array) -> FloatArray:
        """Per row, the highest cosine similarity to any of `queries` (unit vectors, one or more)."""
        codes, steps = quantize(queries, self._query_max)
        if len(codes) == 1:  # two columns keep BLAS on its matrix-matrix routine (see above)
            codes, steps = np.repeat(codes, 2, axis=0), np.repeat(steps, 2)
        tools = self._codes[: self._rows]
        products = np.empty((len(codes), self._rows), dtype=np.float32)
        block = block_rows(self.dim, len(codes))
        scratch = np.empty((min(block, self._rows), self.dim), dtype=np.float32)
        for start in range(0, self._rows, block):
            rows = scratch[: min(block, self._rows - start)]
            np.copyto(rows, tools[start : start + block], casting="unsafe")  # int8 codes, exact
            np.matmul(codes, rows.T, out=products[:, start : start + block])
        products *= steps[:, None]  # each row is scaled alike wherever it lies: same result
        best: FloatArray = products.max(axis=0).astype(np.float64)
        best *= self._steps[: self._rows]
        return best

    def arrays(self) -> dict[str, npt.NDArray[np.generic]]:
        """What `ToolIndex.save` stores: int8 codes and float32 steps."""
        return {
            "dense_codes": self._codes[: self._rows],
            "dense_steps": self._steps[: self._rows],
        }

    @classmethod
    def from_arrays(cls, dim: int, arrays: Mapping[str, npt.NDArray[np.generic]]) -> ToolVectors | None:
        """The stored vectors, or None when absent or not `dim` wide; an index saved before the
        codes (float16 `dense_vectors`) converts to the codes a fresh index would hold."""
        vectors = cls(dim)
        codes, steps = arrays.get("dense_codes"), arrays.get("dense_steps")
        if codes is not None and steps is not None:
            if codes.ndim != 2 or codes.shape[1] != dim or steps.shape != (len(codes),):
                return None
            vectors._codes = codes.astype(np.int8)
            vectors._steps = steps.astype(np.float32)
            vectors._rows = len(codes)
            return vectors
        legacy = arrays.get("dense_vectors")
        if legacy is None or legacy.ndim != 2 or legacy.shape[1] != dim:
            return None
        vectors.append(legacy.astype(np.float32))
        return vectors
