"""Checked reading of request fields: every problem of a request is reported at once, as a 422."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from examples.demo_backend.errors import ApiError

__all__ = ["FieldReader", "read_json_object"]


async def read_json_object(request: Request) -> dict[str, Any]:
    """The request body as a JSON object; 400 when it is not JSON or not an object."""
    raw = await request.body()
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, "malformed_json", f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ApiError(400, "malformed_json", "request body must be a JSON object")
    return data


class FieldReader:
    """Reads fields of a JSON object or query string; `check()` raises one 422 listing all problems.

    Query-string values arrive as text, so with `from_query=True` integers are parsed from strings.
    """

    def __init__(
        self,
        values: Mapping[str, Any],
        *,
        where: str = "",
        from_query: bool = False,
        problems: list[str] | None = None,
    ) -> None:
        self._values = values
        self._where = where
        self._from_query = from_query
        self._seen: set[str] = set()
        self.problems: list[str] = [] if problems is None else problems

    def present(self, name: str) -> bool:
        self._seen.add(name)
        return name in self._values

    def text(
        self,
        name: str,
        *,
        required: bool = False,
        min_length: int = 1,
        max_length: int = 200,
        pattern: str | None = None,
        choices: tuple[str, ...] = (),
        nullable: bool = False,
    ) -> str | None:
        value = self._take(name, required)
        if value is None:
            if name in self._values and not nullable:
                self._problem(name, "must not be null")
            return None
        if not isinstance(value, str):
            self._problem(name, "must be a string")
            return None
        if not min_length <= len(value) <= max_length:
            self._problem(name, f"must be {min_length} to {max_length} characters long")
        elif pattern is not None and re.fullmatch(pattern, value) is None:
            self._problem(name, f"must match {pattern}")
        elif choices and value not in choices:
            self._problem(name, f"must be one of {', '.join(choices)}")
        return value

    def integer(
        self, name: str, *, minimum: int, maximum: int, required: bool = False, default: int | None = None
    ) -> int | None:
        value = self._take(name, required)
        if value is None:
            if name in self._values:
                self._problem(name, "must not be null")
            return default
        if self._from_query and isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            self._problem(name, "must be an integer")
            return default
        if not minimum <= value <= maximum:
            self._problem(name, f"must be between {minimum} and {maximum}")
        return value

    def objects(self, name: str, *, min_items: int, max_items: int) -> list[FieldReader]:
        """A required array of objects, each read by its own reader sharing this one's problems."""
        value = self._take(name, required=True)
        if value is None:
            return []
        if not isinstance(value, list):
            self._problem(name, "must be an array")
            return []
        if not min_items <= len(value) <= max_items:
            self._problem(name, f"must have {min_items} to {max_items} items")
        readers: list[FieldReader] = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                self._problem(f"{name}[{index}]", "must be an object")
                continue
            readers.append(FieldReader(item, where=self._label(f"{name}[{index}]"), problems=self.problems))
        return readers

    def check(self) -> None:
        """Flag unknown fields, then raise when anything was wrong with this request."""
        self.flag_unknown()
        if self.problems:
            raise ApiError(422, "invalid_request", "; ".join(self.problems), list(self.problems))

    def flag_unknown(self) -> None:
        """Record every field that was never read; nested readers call this, the outer one `check()`."""
        for name in sorted(set(self._values) - self._seen):
            self._problem(name, "is not a known field")

    def _take(self, name: str, required: bool) -> Any:
        self._seen.add(name)
        if name not in self._values:
            if required:
                self._problem(name, "is required")
            return None
        return self._values[name]

    def _label(self, name: str) -> str:
        return f"{self._where}.{name}" if self._where else name

    def _problem(self, name: str, what: str) -> None:
        self.problems.append(f"{self._label(name)} {what}")
