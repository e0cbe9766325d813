"""docs/errors.md: generated from the registry, complete, and never drifting from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from colonnade.calls.call_errors import REGISTRY, ErrorSpec
from colonnade.calls.envelope import CallStatus
from colonnade.calls.errors_doc import ERROR_CLASSES, STATUS_MEANINGS, class_of, grouped, render_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def test_checked_in_doc_matches_the_registry() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/errors.md is out of date with calls/call_errors.py: run `make schemas` (or "
        "`colonnade errors -o docs/errors.md`) and commit the result"
    )


def test_every_registered_code_belongs_to_a_class_and_is_documented() -> None:
    doc = render_markdown()
    for spec in REGISTRY.values():
        assert class_of(spec.code).owns(spec.code)
        row = f"| `{spec.code}` | `{spec.status.value}` |"
        assert row in doc, f"{spec.code} has no row in docs/errors.md"
        assert spec.fix.split()[0] in doc


def test_codes_are_grouped_in_taxonomy_order_under_one_heading_each() -> None:
    doc = render_markdown()
    headings = re.findall(r"^### ([A-Z-]+): ", doc, flags=re.MULTILINE)
    assert headings == [c.prefix for c in ERROR_CLASSES]
    assert [c.prefix for c in ERROR_CLASSES] == [
        "I-REQ", "A-AUTH", "P-PRECOND", "R-TIMEOUT", "R-UPSTREAM", "R-CAP", "S-TOOL", "C-CONTRACT", "D-DATA"
    ]
    for error_class, specs in grouped(REGISTRY.values()):
        section = doc.split(f"### {error_class.prefix}: ", 1)[1].split("\n### ", 1)[0]
        assert all(f"`{s.code}`" in section for s in specs)


def test_every_status_is_explained_with_its_retry_rule() -> None:
    assert set(STATUS_MEANINGS) == set(CallStatus)
    doc = render_markdown()
    for status in CallStatus:
        assert f"| `{status.value}` |" in doc
    assert "idempotency_key" in doc and "retry_after_ms" in doc


def test_a_code_outside_every_class_is_refused() -> None:
    with pytest.raises(ValueError, match="X-NEW-THING"):
        class_of("X-NEW-THING")
    assert class_of("R-TIMEOUT-001").prefix == "R-TIMEOUT"
    assert class_of("R-UPSTREAM-429").prefix == "R-UPSTREAM"


def test_rendering_escapes_table_breakers_and_marks_empty_classes() -> None:
    spec = ErrorSpec("S-TOOL-PIPE", CallStatus.TERMINAL_ERROR, "a | b", "line one\nline two")
    doc = render_markdown({spec.code: spec})
    assert "| `S-TOOL-PIPE` | `terminal_error` | a \\| b | line one line two |" in doc
    assert doc.count("No code of this class is emitted yet.") == len(ERROR_CLASSES) - 1
    assert doc.endswith("\n") and not doc.endswith("\n\n")
