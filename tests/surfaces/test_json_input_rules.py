"""The JSON body rules as functions (the end-to-end table is in test_json_input.py)."""

from __future__ import annotations

import json

import pytest

from colonnade.surfaces.json_input import UTF8_BOM, checked_body, checked_json, media_type_refusal


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "Application/JSON",
        " application/json ; charset=utf-8",
        "application/json;charset=UTF8",
        'application/json; profile="x"; charset="utf-8"',
    ],
)
def test_json_media_types(content_type: str) -> None:
    assert media_type_refusal(content_type) is None


@pytest.mark.parametrize(
    "content_type", [None, "", "application/jsonx", "application/ld+json", "application/json; charset=utf-16"]
)
def test_other_media_types(content_type: str | None) -> None:
    refusal = media_type_refusal(content_type)
    assert refusal is not None and (refusal.code, refusal.http_status) == ("I-REQ-MEDIA-TYPE", 415)


def test_the_bom_is_dropped_and_nothing_else_changes() -> None:
    assert checked_body(UTF8_BOM + b'{"a": 1}') == (b'{"a": 1}', None)
    assert checked_body(b'{"a": "\xef\xbb\xbf"}') == (b'{"a": "\xef\xbb\xbf"}', None)  # only a leading mark


def test_a_repeated_key_is_named_and_long_keys_are_cut() -> None:
    _, refusal = checked_body(b'[{"x": {"k": 1, "j": 2, "k": 3}}]')
    assert refusal is not None and refusal.details == {"key": "k"}
    long_key = "k" * 500
    _, refusal = checked_body(f'{{"{long_key}": 1, "{long_key}": 2}}'.encode())
    assert refusal is not None and refusal.details["key"] == "k" * 100 + "..."


def test_the_same_key_in_sibling_objects_is_fine_and_bad_json_is_left_to_the_surface() -> None:
    assert checked_body(b'[{"k": 1}, {"k": 2}]')[1] is None
    assert checked_body(b'{"k": 1, "k"')[1] is None
    assert checked_body(b"[" * 5000 + b"]" * 5000)[1] is None  # deep nesting: the surface's parser decides


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": [1, 2.5, "x", null, true, {"b": {}}], "c": -1e400, "d": 12345678901234567890}',
        b'[{"k": 1}, {"k": 2}]',
        b'"text"',
        b"null",
    ],
)
def test_the_parsed_value_is_the_bodys(body: bytes) -> None:
    """What the edge hands on (for surfaces that would parse the body again) is what json.loads reads."""
    assert checked_json(UTF8_BOM + body) == (body, json.loads(body), None)


def test_no_value_for_a_refused_or_malformed_body() -> None:
    _, document, refusal = checked_json(b'{"k": 1, "k": 2}')
    assert document is None and refusal is not None
    assert checked_json(b'{"k": 1, "k"') == (b'{"k": 1, "k"', None, None)
