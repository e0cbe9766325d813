"""docs/governance.md's persona x scope table is the code's, cell by cell (72 cells)."""

from __future__ import annotations

import re

from colonnade.governance.personas import ALL_SCOPES, PERSONA_SCOPES, Persona
from tests.support.repo import ROOT

DOC = ROOT / "docs" / "governance.md"


def _table() -> dict[str, dict[str, bool]]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- persona-scopes.*?-->\n(.*?)<!-- /persona-scopes -->", text, re.S)
    assert block is not None, "the persona-scopes table markers are missing"
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")] for line in block.group(1).splitlines()
    ]
    header, _, *body = rows
    scopes = [f"colonnade:{name}" for name in header[1:]]
    return {row[0]: {scope: cell == "✓" for scope, cell in zip(scopes, row[1:], strict=True)} for row in body}


def test_the_documented_matrix_is_the_codes() -> None:
    table = _table()
    assert set(table) == {persona.value for persona in Persona}
    for persona, cells in table.items():
        assert set(cells) == ALL_SCOPES
        for scope, granted in cells.items():
            assert granted == (scope in PERSONA_SCOPES[Persona(persona)]), (persona, scope)


def test_the_comparison_can_fail() -> None:
    """Guards the test above: a table with one cell flipped disagrees with the code."""
    table = _table()
    table["consumer"]["colonnade:catalog:write"] = True
    assert any(
        granted != (scope in PERSONA_SCOPES[Persona(persona)])
        for persona, cells in table.items()
        for scope, granted in cells.items()
    )
