"""Retry-After parsing, backend message extraction and strict JSON, on their own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from multidict import CIMultiDict

from colonnade.adapters.http.response import (
    BackendAnswer,
    backend_message,
    outcome_from_response,
    retry_after_ms,
)
from colonnade.adapters.outcome import OutcomeKind

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("120", 120_000),
        (" 3 ", 3_000),
        ("0", 0),
        ("1.5", 1_500),
        ("Sun, 01 Mar 2026 12:00:30 GMT", 30_000),
        ("Sun, 01 Mar 2026 11:59:00 GMT", 0),
        ("-5", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_ms(header: str | None, expected: int | None) -> None:
    assert retry_after_ms(header, now=NOW) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"message": "bad email"}, "bad email"),
        ({"detail": "not allowed"}, "not allowed"),
        ({"error": {"message": "nested"}}, "nested"),
        ({"error": "invalid_grant", "error_description": "expired"}, "expired"),
        ({"title": "Conflict", "detail": "version 3 is newer"}, "version 3 is newer"),
        ({"detail": [{"msg": "a required"}, {"msg": "b too long"}]}, "a required; b too long"),
        ({"message": ""}, None),
        ({"code": 17}, None),
        ("  plain text  ", "plain text"),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_backend_message(body: Any, expected: str | None) -> None:
    assert backend_message(body) == expected


def test_long_backend_message_is_clipped() -> None:
    message = backend_message({"message": "x" * 5000})

    assert message is not None
    assert len(message) == 500
    assert message.endswith("…")


@pytest.mark.parametrize(
    ("content", "ok"),
    [
        (b'{"a": NaN}', False),
        (b'{"a": -Infinity}', False),
        (b'{"a": "\\ud800"}', False),
        (b'{"a": "\\u00e9\\ud83d\\ude00"}', True),
        (b'{"a": 1.5}', True),
    ],
)
def test_only_strict_json_is_a_success(content: bytes, ok: bool) -> None:
    answer = BackendAnswer(200, "OK", CIMultiDict({"Content-Type": "application/json"}))
    outcome = outcome_from_response(answer, content, 1.0)
    assert (outcome.kind is OutcomeKind.SUCCESS) is ok
    if not ok:
        assert outcome.error_code == "D-DATA-MALFORMED"
