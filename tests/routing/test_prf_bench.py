"""The pseudo-relevance feedback `bench/routing_prf.py` tries does what docs/routing.md says.

docs/routing.md records that no form of feedback survived cross-validation; that finding is only
worth as much as the feedback it measured: with weight 0 it must be the shipped signal exactly,
and with weight it must pull in what the feedback tools share and nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from routing_prf import analyse, feedback_rows, relevance_model, rm3_lexical, rocchio_dense, tool_vectors

from colonnade.routing import IndexConfig, ToolIndex
from colonnade.routing.dense import load_embedder
from colonnade.routing.documents import ToolDoc

TOOLS = [
    ToolDoc("mail/send_message", "send_message", description="Send a message to a recipient over email."),
    ToolDoc("mail/lookup_contact", "lookup_contact", description="Find the email address of a recipient."),
    ToolDoc("weather/forecast", "forecast", description="Weather forecast for a city."),
    ToolDoc("files/write_file", "write_file", description="Write text to a file on disk."),
]


def _index(dense: bool) -> ToolIndex:
    index = ToolIndex(IndexConfig(dense=dense))
    index.upsert(TOOLS)
    index.compact()
    return index


def test_feedback_rows_are_the_best_positive_rows_best_first() -> None:
    total = np.array([[0.2, 0.0, 0.9, 0.5], [0.0, 0.0, 0.0, 0.3]])
    rows = feedback_rows(total, 3)
    assert [r.tolist() for r in rows] == [[2, 3, 0], [3]]


def test_rm3_at_beta_zero_is_the_shipped_whole_request_signal() -> None:
    index = _index(dense=False)
    request = analyse(index, "send a message")
    _, signals = index.signals("send a message")
    (zero,) = rm3_lexical(index, request, np.array([0]), np.array([1.0]), (0.0,))
    assert zero.tolist() == signals.lexical.tolist()


def test_rm3_pulls_in_the_tool_sharing_the_feedback_tools_words_only() -> None:
    index = _index(dense=False)
    request = analyse(index, "send a message")
    ids = index._ids
    row = ids.index("mail/send_message")
    model = relevance_model(index, np.array([row]), np.array([1.0]))
    words = {index._lexical.vocabulary.terms[t] for t in model}
    assert set(index._analyzer.terms("recipient email")) <= words
    plain, expanded = rm3_lexical(index, request, np.array([row]), np.array([1.0]), (0.0, 0.5))
    contact, weather = ids.index("mail/lookup_contact"), ids.index("weather/forecast")
    assert plain[contact] == 0.0 and expanded[contact] > 0.0
    assert expanded[weather] == 0.0
    assert np.argmax(expanded) == row


def test_rm3_without_feedback_leaves_the_request_as_it_is() -> None:
    index = _index(dense=False)
    request = analyse(index, "send a message")
    plain, expanded = rm3_lexical(index, request, np.array([], dtype=np.int64), np.array([]), (0.0, 1.0))
    assert plain.tolist() == expanded.tolist()


@pytest.fixture(scope="module")
def dense_index() -> ToolIndex:
    if load_embedder() is None:
        pytest.skip("no dense model installed: `pip install colonnade[dense]` (make install does it)")
    return _index(dense=True)


def test_rocchio_at_alpha_zero_is_the_shipped_dense_signal(dense_index: ToolIndex) -> None:
    request = analyse(dense_index, "send a message to Anna, then save it to a file")
    _, signals = dense_index.signals("send a message to Anna, then save it to a file")
    tools = tool_vectors(dense_index)
    zero = rocchio_dense(dense_index, request, tools, np.array([0]), 0.0)
    assert signals.dense is not None
    np.testing.assert_allclose(zero, signals.dense, atol=1e-6)


def test_rocchio_moves_the_request_towards_the_feedback_tools(dense_index: ToolIndex) -> None:
    request = analyse(dense_index, "send a message")
    tools = tool_vectors(dense_index)
    weather = dense_index._ids.index("weather/forecast")
    plain = rocchio_dense(dense_index, request, tools, np.array([weather]), 0.0)
    moved = rocchio_dense(dense_index, request, tools, np.array([weather]), 2.0)
    assert moved[weather] > plain[weather]
