"""Quantized tool vectors: close to the cosine, exact wherever a row lies, compatible with old files."""

from __future__ import annotations

import numpy as np
import pytest

from colonnade.routing.vectors import CODE_MAX, ToolVectors, block_rows, quantize, query_code_max


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _vectors(rows: np.ndarray) -> ToolVectors:
    vectors = ToolVectors(rows.shape[1])
    vectors.append(rows)
    return vectors


def test_every_product_of_codes_sums_exactly_in_float32() -> None:
    for dim in (4, 256, 384, 1024):
        assert dim * CODE_MAX * query_code_max(dim) < 2**24
    assert query_code_max(256) == 516


def test_each_block_of_the_product_stays_below_openblas_threading() -> None:
    """OpenBLAS threads a product of more than 4 x 65,536 multiply-adds; on a busy machine its
    threads wait for free cores (a 20,000-tool product in one block: 13 ms of process CPU, 21 ms
    wall, against 2 ms in blocks)."""
    for dim in (64, 256, 1024):
        for columns in range(2, 17):
            rows = block_rows(dim, columns)
            assert rows >= 1 and rows * dim * columns <= 4 * 65_536
    assert block_rows(256, 4) == 256


def test_similarity_is_the_best_cosine_over_the_clauses_within_a_small_error() -> None:
    tools, clauses = _unit(500, 256, 1), _unit(3, 256, 2)
    exact = (tools @ clauses.T).max(axis=1)
    got = _vectors(tools).best_similarity(clauses)
    assert np.abs(got - exact).max() < 0.01
    one = _vectors(tools).best_similarity(clauses[:1])  # a one-clause request
    assert np.abs(one - tools @ clauses[0]).max() < 0.01


def test_the_products_are_exact_whatever_order_blas_adds_in() -> None:
    """The float32 product of the codes equals their exact (float64) integer product, so no BLAS,
    thread count or blocking can change a score."""
    tools, clauses = _unit(700, 256, 12), _unit(4, 256, 13)
    tool_codes, tool_steps = quantize(tools)
    codes, steps = quantize(clauses, query_code_max(256))
    exact = (codes.astype(np.float64) @ tool_codes.astype(np.float64).T).astype(np.float32)
    expected = (exact * steps[:, None]).max(axis=0).astype(np.float64) * tool_steps
    assert _vectors(tools).best_similarity(clauses).tobytes() == expected.tobytes()


def test_a_row_scores_the_same_bits_wherever_it_lies() -> None:
    """Rows cross the product's block boundaries in another order: nothing may change, or an
    index updated in place would rank unlike one rebuilt."""
    tools, clauses = _unit(1500, 256, 3), _unit(5, 256, 4)
    order = np.random.default_rng(5).permutation(len(tools))
    straight = _vectors(tools).best_similarity(clauses)
    shuffled = _vectors(tools[order]).best_similarity(clauses)
    assert shuffled.tobytes() == straight[order].tobytes()
    tail = _vectors(tools[1000:]).best_similarity(clauses)
    assert tail.tobytes() == straight[1000:].tobytes()


def test_growing_and_compacting_keep_each_rows_codes() -> None:
    tools, clauses = _unit(300, 16, 6), _unit(2, 16, 7)
    grown = ToolVectors(16)
    for start in range(0, 300, 7):
        grown.append(tools[start : start + 7])
    assert len(grown) == 300
    assert grown.best_similarity(clauses).tobytes() == _vectors(tools).best_similarity(clauses).tobytes()
    keep = np.array([299, 3, 150], dtype=np.int64)
    grown.take(keep)
    assert (
        grown.best_similarity(clauses).tobytes() == _vectors(tools[keep]).best_similarity(clauses).tobytes()
    )


def test_zero_vectors_get_zero_codes_and_score_zero() -> None:
    codes, steps = quantize(np.zeros((2, 8), dtype=np.float32))
    assert not codes.any() and not steps.any()
    tools = np.vstack([np.zeros((1, 8), dtype=np.float32), _unit(1, 8, 8)])
    assert _vectors(tools).best_similarity(_unit(1, 8, 9))[0] == 0.0


def test_stored_codes_and_an_older_float16_file_load_as_a_fresh_index_holds_them() -> None:
    tools, clauses = _unit(40, 32, 10), _unit(2, 32, 11)
    fresh = _vectors(tools)
    saved = fresh.arrays()
    assert saved["dense_codes"].dtype == np.int8 and saved["dense_steps"].dtype == np.float32
    for arrays in (saved, {"dense_vectors": tools.astype(np.float16)}):
        loaded = ToolVectors.from_arrays(32, arrays)
        assert loaded is not None and len(loaded) == 40
        assert loaded.best_similarity(clauses).tobytes() == fresh.best_similarity(clauses).tobytes()


@pytest.mark.parametrize(
    "arrays",
    [
        {},
        {"dense_vectors": np.zeros((3, 16), dtype=np.float16)},
        {"dense_codes": np.zeros((3, 32), dtype=np.int8), "dense_steps": np.zeros(2, dtype=np.float32)},
    ],
)
def test_missing_or_misshapen_arrays_are_refused(arrays: dict[str, np.ndarray]) -> None:
    assert ToolVectors.from_arrays(32, arrays) is None
