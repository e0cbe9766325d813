"""Dense (embedding) similarity from a static embedding model, when one is installed.

Words alone miss requests phrased unlike the tool ("recommend a starter team" for a game-stats
tool). A transformer encoder (MiniLM) closes part of that gap but costs 14-25 ms a query on two
shared cores; a *static* model, one learned vector per token averaged over the text, costs about
0.1 ms and scored as well as MiniLM on the dev splits (`bench/dense_probe.py`). The model used is
the WordLlama `l2_supercat` 256-dimensional token table that the `wordllama` package ships inside
its wheel (MIT; installed by `pip install colonnade[dense]`); nothing is ever downloaded.

The files are read directly (safetensors + a `tokenizers` JSON), not through the package's own
loader, which looks for its bundled tokenizer in the wrong folder and then goes to the network.
Without the package, `load_embedder()` returns None and the router runs on words alone.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["SIMILARITY_SCALE", "Embedder", "StaticEmbedder", "load_embedder", "normalized_similarity"]

logger = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]

_PACKAGE = "wordllama"
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
_TENSOR = "embedding.weight"
# Batches at least this large are tokenised on the tokenizer's thread pool (indexing a catalog).
_PARALLEL_BATCH = 64


class Embedder(Protocol):
    """Texts to unit-length vectors; `model_id` names the model (stored vectors are tied to it)."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> Matrix: ...


@dataclass(frozen=True, slots=True, eq=False)
class StaticEmbedder:
    """Mean of token vectors, L2-normalised: a whole batch of texts is one table gather."""

    table: Matrix
    tokenizer: _Tokenizer
    model_id: str

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])

    def embed(self, texts: list[str]) -> Matrix:
        """One unit vector per text (a text without known tokens gives a zero vector)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        if len(texts) >= _PARALLEL_BATCH:
            encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        else:  # a query's few clauses: one thread, no pool to wait for on busy cores
            encodings = [self.tokenizer.encode(text, add_special_tokens=False) for text in texts]
        ids = [e.ids for e in encodings]  # each `.ids` builds a new list
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(texts))
        flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
        if len(flat):
            np.clip(flat, 0, len(self.table) - 1, out=flat)
            # Sums per text over its run of rows (`np.add.at` took several times longer);
            # a text without tokens keeps its zero row.
            starts = np.cumsum(lengths) - lengths
            filled = lengths > 0
            out[filled] = np.add.reduceat(self.table[flat], starts[filled], axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        result: Matrix = np.divide(out, norms, out=out, where=norms > 0)
        return result


class _Tokenizer(Protocol):  # the part of `tokenizers.Tokenizer` used here
    def encode(
        self, sequence: Any, pair: Any = ..., is_pretokenized: bool = ..., add_special_tokens: bool = ...
    ) -> _Encoding: ...

    def encode_batch(
        self, input: Sequence[Any], is_pretokenized: bool = ..., add_special_tokens: bool = ...
    ) -> Sequence[_Encoding]: ...


class _Encoding(Protocol):
    @property
    def ids(self) -> list[int]: ...


# A tool this much more similar to the request than the catalog's average tool counts fully.
# About the usual distance from the mean to the best tool for this model (median 0.33 on
# LiveMCPBench dev, 0.61 on Seal-Tools dev), so an unsure dense signal counts less.
SIMILARITY_SCALE = 0.5


def normalized_similarity(similarity: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Cosine similarities measured from their mean over the catalog, in units of
    `SIMILARITY_SCALE`, within [0, 1] (below the mean: 0).

    Raw cosines of unrelated texts are far from 0 and close to each other, so the mean is the
    zero point. A fixed unit rather than the best tool's similarity: when the request is unlike
    every tool, no tool gets the full dense weight just for being the least unlike it.
    """
    if not len(similarity):
        return similarity
    scaled: npt.NDArray[np.float64] = np.clip((similarity - similarity.mean()) / SIMILARITY_SCALE, 0.0, 1.0)
    return scaled


def model_files() -> tuple[Path, Path] | None:
    """The bundled weight and tokenizer files, or None when the package is not installed."""
    try:
        spec = importlib.util.find_spec(_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = root.joinpath(*_WEIGHTS), root.joinpath(*_TOKENIZER)
    if not weights.is_file() or not tokenizer.is_file():
        return None
    return weights, tokenizer


@lru_cache(maxsize=1)
def load_embedder() -> StaticEmbedder | None:
    """The installed static model, loaded once per process (about 30 ms), or None."""
    files = model_files()
    if files is None:
        return None
    weights, tokenizer_file = files
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        table = np.ascontiguousarray(load_file(str(weights))[_TENSOR], dtype=np.float32)
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()
        tokenizer.no_truncation()
    except Exception as exc:  # a broken install turns dense off, never routing
        logger.warning("dense routing is off: cannot load %s (%s)", weights, exc)
        return None
    digest = hashlib.sha256(table[:64].tobytes()).hexdigest()[:12]
    rows, dim = table.shape
    return StaticEmbedder(table, tokenizer, f"{_PACKAGE}/{weights.stem}/{rows}x{dim}/{digest}")
