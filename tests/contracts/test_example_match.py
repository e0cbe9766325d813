"""`expected_output_contains`: an object is a recursive subset of the result, a string a JSON substring."""

from __future__ import annotations

from typing import Any

import pytest

from colonnade.contracts.example_match import mismatch, output_contains
from colonnade.contracts.model import LlmExample

CUSTOMER = {
    "id": "cust_123",
    "name": "Ada Example",
    "address": {"city": "Lyon", "country": "FR"},
    "tags": ["vip", "beta"],
    "orders": [{"id": "o-1", "total": 12.5}, {"id": "o-2", "total": 3}],
    "active": True,
    "score": 1,
}


@pytest.mark.parametrize(
    "expected",
    [
        {"id": "cust_123"},  # the ADR's own example
        {},
        {"address": {"city": "Lyon"}},
        {"tags": ["beta"]},
        {"orders": [{"id": "o-2"}]},
        {"orders": [{"total": 12.5}, {"id": "o-2", "total": 3.0}]},
        {"active": True, "score": 1},
        '"id": "cust_123"',
        '"id":"cust_123"',
        "Ada Example",
    ],
)
def test_contained(expected: Any) -> None:
    assert output_contains(CUSTOMER, expected)
    assert mismatch(CUSTOMER, expected) is None


@pytest.mark.parametrize(
    ("expected", "why"),
    [
        ({"id": "cust_999"}, '/id is "cust_123", expected "cust_999"'),
        ({"email": "a@example.com"}, "/email is missing"),
        ({"address": {"city": "Paris"}}, '/address/city is "Lyon", expected "Paris"'),
        ({"address": "Lyon"}, '/address is an object, expected "Lyon"'),
        ({"name": {"first": "Ada"}}, "/name is \"Ada Example\", expected an object"),
        ({"tags": ["gold"]}, '/tags has no item matching expected item 0: "gold"'),
        ({"active": 1}, "/active is true, expected 1"),
        ({"score": True}, "/score is 1, expected true"),
        ("cust_999", "the JSON result has no 'cust_999'"),
    ],
)
def test_not_contained_says_where(expected: Any, why: str) -> None:
    assert not output_contains(CUSTOMER, expected)
    assert mismatch(CUSTOMER, expected) == why


def test_an_object_never_matches_a_non_object_result() -> None:
    assert mismatch([{"id": "cust_123"}], {"id": "cust_123"}) == "/ is an array, expected an object"


def test_a_string_matches_inside_an_array_or_scalar_result() -> None:
    assert output_contains([{"id": "p-1"}], '"id": "p-1"')
    assert output_contains("logged in user session:42", "session:42")


def test_both_forms_validate_in_the_model_and_read_as_text() -> None:
    as_object = LlmExample.model_validate({"input": {}, "expected_output_contains": {"id": "cust_123"}})
    as_string = LlmExample.model_validate({"input": {}, "expected_output_contains": "cust_123"})
    assert as_object.expected_text() == '{"id": "cust_123"}'
    assert as_string.expected_text() == "cust_123"
