"""Compiled validators: every violation with its pointer, and the right validator for each schema."""

from __future__ import annotations

from typing import Any

from colonnade.calls.schema_validation import violations


def _schema(required: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"id": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
        "required": [required],
        "additionalProperties": False,
    }


def test_every_violation_is_listed_with_its_pointer() -> None:
    found = violations(_schema("id"), {"n": 0, "extra": True})
    assert [v.pointer for v in found] == ["", "", "/n"]
    assert any('"id" is a required property' in v.message for v in found)
    assert any("extra" in v.message for v in found)
    assert violations(_schema("id"), {"id": "C-1", "n": 2}) == []


def test_each_schema_object_gets_its_own_validator() -> None:
    """Schemas are cached by identity and by content; neither may hand one schema another's rules."""
    needs_id, needs_n = _schema("id"), _schema("n")
    for _ in range(3):  # alternate, so a cached entry is reused every time
        assert violations(needs_id, {"id": "x"}) == []
        assert [v.pointer for v in violations(needs_n, {"id": "x"})] == [""]
    equal = _schema("id")  # same content, new object
    assert violations(equal, {"n": 1}) != [] and violations(equal, {"id": "y"}) == []
    for _ in range(50):  # short-lived schemas whose ids the allocator may recycle
        temporary = _schema("n")
        assert violations(temporary, {"id": "x"}) != []
        del temporary
        assert violations(_schema("id"), {"id": "x"}) == []
