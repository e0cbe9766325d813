"""Does a result contain what an example expects? One answer for the smoke, the tests and the docs.

`expected_output_contains` takes two forms. An object (the contract ADR's own form,
`{"id": "cust_123"}`) lists fields the result must have with these values, recursively: nested
objects are subsets too, and each item of an expected array must match some item of the result's
array. A string must be a substring of the result serialised as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["mismatch", "output_contains"]


def output_contains(output: Any, expected: str | Mapping[str, Any]) -> bool:
    """True when `output` (the tool's result as JSON data) contains `expected`."""
    return mismatch(output, expected) is None


def mismatch(output: Any, expected: str | Mapping[str, Any]) -> str | None:
    """Why `output` does not contain `expected` (where and what differs), or None when it does."""
    if isinstance(expected, str):
        if any(expected in text for text in _json_forms(output)):
            return None
        return f"the JSON result has no {expected!r}"
    return _subset(output, expected, "")


def _json_forms(output: Any) -> tuple[str, str]:
    """The result as JSON, spaced (`"a": 1`) and compact (`"a":1`): authors write either."""
    return (
        json.dumps(output, ensure_ascii=False),
        json.dumps(output, ensure_ascii=False, separators=(",", ":")),
    )


def _subset(actual: Any, expected: Any, where: str) -> str | None:
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where or '/'} is {_kind(actual)}, expected an object"
        for key, value in expected.items():
            pointer = f"{where}/{_escape(str(key))}"
            if key not in actual:
                return f"{pointer} is missing"
            problem = _subset(actual[key], value, pointer)
            if problem is not None:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where or '/'} is {_kind(actual)}, expected an array"
        for index, item in enumerate(expected):
            if not any(_subset(candidate, item, where) is None for candidate in actual):
                return f"{where or '/'} has no item matching expected item {index}: {_short(item)}"
        return None
    if _same_scalar(actual, expected):
        return None
    return f"{where or '/'} is {_kind(actual)}, expected {_short(expected)}"


def _same_scalar(actual: Any, expected: Any) -> bool:
    """JSON equality: `true` is not `1`, while `1` and `1.0` are the same number."""
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, Mapping | list):
        return False
    return bool(actual == expected)


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return _short(value)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
