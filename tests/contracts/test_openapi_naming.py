"""Names an OpenAPI import has to invent: identifiers, kebab-case, semver, truncation."""

from __future__ import annotations

import re

import pytest

from colonnade.contracts.model import KEBAB, OPERATION_ID, SEMVER
from colonnade.contracts.openapi.naming import coerce_semver, identifier, kebab, snake_case, truncate, unique


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("get-user", "get_user"),
        ("repos/list-for-user", "repos_list_for_user"),
        ("listPets", "listPets"),
        ("  spaced  out ", "spaced_out"),
        ("2fa/enable", "_2fa_enable"),
        ("expand[]", "expand"),
        ("---", ""),
    ],
)
def test_identifier_gives_operation_id_shapes(raw: str, expected: str) -> None:
    assert identifier(raw) == expected
    if expected:
        assert re.match(OPERATION_ID, expected)


def test_identifier_lowercases_header_names_on_request() -> None:
    assert identifier("X-Request-Id", lower=True) == "x_request_id"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("listPets", "list_pets"),
        ("GetCustomersCustomer", "get_customers_customer"),
        ("repos/get-HTTPStatus", "repos_get_http_status"),
        ("issues_create", "issues_create"),
    ],
)
def test_snake_case_splits_camel_case(raw: str, expected: str) -> None:
    assert snake_case(raw) == expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Swagger Petstore - OpenAPI 3.0", "swagger-petstore-openapi-3-0"),
        ("GitHub v3 REST API", "github-v3-rest-api"),
        ("  Acme_Tasks!! ", "acme-tasks"),
        ("***", ""),
    ],
)
def test_kebab_names_contracts(title: str, expected: str) -> None:
    assert kebab(title) == expected
    if expected:
        assert re.match(KEBAB, expected)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.0.0", "1.0.0"),
        ("1.0", "1.0.0"),
        ("v2", "2.0.0"),
        ("V3.1", "3.1.0"),
        ("2022-11-28", "2022.11.28"),
        ("2.0.0-beta.1", "2.0.0-beta.1"),
        ("1.2-rc1", "1.2.0-rc1"),
        ("1.0.0.7", None),
        ("latest", None),
        ("", None),
    ],
)
def test_coerce_semver(version: str, expected: str | None) -> None:
    assert coerce_semver(version) == expected
    if expected is not None:
        assert re.match(SEMVER, expected)


def test_unique_numbers_clashes_and_respects_the_length_limit() -> None:
    assert unique("get_user", set()) == "get_user"
    assert unique("get_user", {"get_user"}) == "get_user_2"
    assert unique("get_user", {"get_user", "get_user_2"}) == "get_user_3"
    long = "x" * 64
    renamed = unique(long, {long}, max_length=64)
    assert len(renamed) == 64 and renamed.endswith("_2")


def test_truncate_cuts_at_a_word_and_marks_the_cut() -> None:
    text = "Returns a list of your customers,   sorted by\ncreation date with the most recent first."
    assert truncate(text, 200) == " ".join(text.split())
    short = truncate(text, 40)
    assert len(short) <= 40
    assert short == "Returns a list of your customers..."
