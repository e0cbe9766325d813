"""The server-expansion rules `bench/routing_expand.py` cross-validates do what docs/routing.md says.

docs/routing.md records that no form of server expansion survived cross-validation; that finding
is only worth as much as the re-ranking it measured, so the re-ranking is checked on small cases.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from routing_expand import api_lift, tail_fill

# One query, six tools: rows 0-2 of API 0, rows 3-4 of API 1, row 5 of API 2.
API = np.array([0, 0, 0, 1, 1, 2])
TOTAL = np.array([[1.0, 0.5, 0.25, 0.8, 0.0, 0.4]])


def test_best_lift_gives_each_tool_its_best_sibling_scaled_by_the_query_best() -> None:
    lift = api_lift(TOTAL * 2, API, "best")  # scaled: the same as for TOTAL
    assert lift.tolist() == [[0.5, 1.0, 1.0, 0.0, 0.8, 0.0]]


def test_second_lift_needs_two_strong_siblings() -> None:
    lift = api_lift(TOTAL, API, "second")
    assert lift.tolist() == [[0.25, 0.25, 0.5, 0.0, 0.0, 0.0]]


@pytest.mark.parametrize(("mode", "apis"), [("top1", {0}), ("top2", {0, 1})])
def test_top_lift_marks_the_matching_tools_of_the_leading_apis(mode: str, apis: set[int]) -> None:
    lift = api_lift(TOTAL, API, mode)
    expected = [1.0 if API[row] in apis and TOTAL[0, row] > 0 else 0.0 for row in range(6)]
    assert lift.tolist() == [expected]


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        api_lift(TOTAL, API, "all")


def test_tail_fill_moves_only_siblings_of_the_leader_into_the_last_places() -> None:
    # Twelve tools: the leader (row 0) is of API 5; its sibling row 11 ranks last.
    api = np.array([5, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 5])
    total = np.array([np.linspace(1.0, 0.1, 12)])
    filled = tail_fill(total, api, slots=2, leaders=1)
    order = np.argsort(-filled[0], kind="stable")[:10].tolist()
    assert order == [0, 1, 2, 3, 4, 5, 6, 7, 11, 8]
    assert (filled[0][[9, 10]] == 0).all()  # pushed out of the ten


def test_tail_fill_leaves_the_ranking_when_the_leader_has_no_matching_sibling() -> None:
    api = np.arange(12)
    total = np.array([np.linspace(1.0, 0.1, 12)])
    filled = tail_fill(total, api, slots=3, leaders=2)
    assert np.argsort(-filled[0], kind="stable")[:10].tolist() == list(range(10))
