"""The README's sample output is a real run: the shipped billing contract with three mistakes, validated."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from colonnade.contracts.rules import CODES
from tests.support.repo import ROOT

COLONNADE = Path(sys.executable).with_name("colonnade")
PROMPT = "$ colonnade contract validate billing.yaml\n"


def _broken_billing() -> str:
    """The three mistakes the README describes, made in the shipped file."""
    text = (ROOT / "examples" / "contracts" / "billing.yaml").read_text(encoding="utf-8")
    text = text.replace("      tool_name: list_invoices\n", "      tool_name: list invoices!\n", 1)
    void = text.index("tool_name: void_invoice")
    rest = text[void:].replace("requires_human_approval: true", "requires_human_approval: false", 1)
    rest = rest.replace("reason: Replaced by a corrected invoice", "reason: 4111 1111 1111 1111", 1)
    assert rest != text[void:], "the void_invoice example changed: update this test and the README"
    return text[:void] + rest


def test_the_readme_shows_what_validate_prints_for_the_shipped_billing_contract(tmp_path: Path) -> None:
    (tmp_path / "billing.yaml").write_text(_broken_billing(), encoding="utf-8")
    run = subprocess.run(
        [str(COLONNADE), "contract", "validate", "billing.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(re.escape(PROMPT) + r"(.*?)^```$", readme, re.S | re.M)
    assert shown is not None, "the README lost its sample validation run"
    assert shown.group(1) == run.stdout


def test_every_range_of_validator_codes_the_docs_give_ends_at_the_last_code() -> None:
    last = max(code for code in CODES if code.startswith("UAC"))
    for page in (ROOT / "README.md", ROOT / "docs" / "cli.md", ROOT / "docs" / "contract-reference.md"):
        for end in re.findall(r"UAC001\s*-\s*(UAC\d{3})", page.read_text(encoding="utf-8")):
            assert end == last, f"{page.name} says UAC001-{end}; the validator's codes end at {last}"
