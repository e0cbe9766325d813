"""The digest of a downstream tool's definition, and a readable diff between two definitions.

What an agent relies on is what the server lists: name, title, description, input and output
schema and annotations. Their digest is what the gateway pins when it admits a tool; a server that
later lists a different definition for the same name has changed the tool under its callers.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any, Literal

import mcp_types as types

__all__ = ["PINNED_FIELDS", "AdmissionRefused", "definition_diff", "definition_digest", "definition_of"]

PINNED_FIELDS = ("name", "title", "description", "input_schema", "output_schema", "annotations")


class AdmissionRefused(Exception):
    """An approval that cannot be taken: nothing parked, a blocked tool, or the same person twice."""

    def __init__(self, reason: Literal["unknown", "blocked", "self-approval"], message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    @property
    def code(self) -> str:
        """The registry code REST and the pages answer with."""
        return _REFUSALS[self.reason][0]

    @property
    def http_status(self) -> int:
        return _REFUSALS[self.reason][1]


_REFUSALS = {
    "unknown": ("I-REQ-TOOL-NOT-PARKED", 404),
    "self-approval": ("A-AUTH-ADMISSION-SELF", 409),
    "blocked": ("A-AUTH-ADMISSION-BLOCKED", 409),
}


def definition_of(tool: types.Tool) -> dict[str, Any]:
    """The pinned fields of a listed tool as plain JSON data (absent fields as null)."""
    annotations = tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "annotations": annotations or None,
    }


def definition_digest(definition: dict[str, Any]) -> str:
    """sha256 (hex) of the key-sorted compact JSON of a definition."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def definition_diff(admitted: dict[str, Any] | None, listed: dict[str, Any]) -> str:
    """A unified diff, field by field, of the admitted definition and the listed one (all `+` for a
    tool never admitted): what an approver reads before admitting the change."""
    before = _lines(admitted) if admitted is not None else []
    after = _lines(listed)
    diff = difflib.unified_diff(before, after, "admitted", "listed now", lineterm="", n=2)
    return "\n".join(diff)


def _lines(definition: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for field in PINNED_FIELDS:
        value = definition.get(field)
        if isinstance(value, str):
            body = value.splitlines() or [""]
            lines.extend(f"{field}: {line}" for line in body)
        else:
            rendered = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
            lines.extend(f"{field}: {line}" for line in rendered.splitlines())
    return lines
