"""docs/platform-tools.md lists every core tool with the code's ADR-012 name, side effects, scopes
and persona matrix, row by row, and no tool the code does not define."""

from __future__ import annotations

import re

from colonnade.governance.personas import Persona
from colonnade.platform import CORE_TOOLS, CoreTool
from colonnade.platform.resources import PLATFORM_RESOURCES
from tests.support.repo import ROOT

DOC = ROOT / "docs" / "platform-tools.md"


def _rows() -> dict[str, dict[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- core-tools -->\n(.*?)<!-- /core-tools -->", text, re.S)
    assert block is not None, "the core-tools table markers are missing"
    lines = [
        [cell.strip() for cell in line.strip().strip("|").split("|")] for line in block.group(1).splitlines()
    ]
    header, _, *body = lines
    return {row[1].strip("`"): dict(zip(header, row, strict=True)) for row in body}


def _expected(core: CoreTool) -> dict[str, str]:
    cells = {
        "ADR-012 name": core.adr_name,
        "tool": f"`{core.wire_name}`",
        "group": core.group,
        "side effects": core.side_effects.value,
        "scopes (one of)": ", ".join(scope.value.removeprefix("colonnade:") for scope in core.scopes),
    }
    for persona in Persona:
        mark = "allow-list" if persona is Persona.AGENT else "✓"
        cells[persona.value] = mark if persona in core.personas else ""
    return cells


def test_the_page_lists_every_core_tool_as_the_code_defines_it() -> None:
    rows = _rows()
    assert set(rows) == {core.wire_name for core in CORE_TOOLS}
    for core in CORE_TOOLS:
        assert rows[core.wire_name] == _expected(core), core.name


def test_the_comparison_can_fail() -> None:
    rows = _rows()
    core = CORE_TOOLS[0]
    rows[core.wire_name]["agent"] = ""
    assert rows[core.wire_name] != _expected(core)


def test_the_page_counts_what_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"{len(CORE_TOOLS) + 1} exist (the {len(CORE_TOOLS)} above and `search_tools`)" in text


def test_the_page_lists_every_resource_with_its_tool() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- platform-resources -->\n(.*?)<!-- /platform-resources -->", text, re.S)
    assert block is not None, "the platform-resources table markers are missing"
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")] for line in block.group(1).splitlines()
    ]
    documented = {row[0].strip("`"): (row[1], row[2].strip("`")) for row in rows[2:]}
    assert documented == {r.uri: (r.adr_name, r.wire_tool) for r in PLATFORM_RESOURCES}
