"""`scripts/conformance.sh`: the conformance suite finds no difference between the reference server
and the same server through Colonnade's `/servers/reference/mcp`, at 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.repo import ROOT

pytestmark = pytest.mark.e2e


def test_colonnade_is_transparent_to_the_conformance_suite() -> None:
    run = subprocess.run(
        [str(ROOT / "scripts" / "conformance.sh")], capture_output=True, text=True, timeout=900, cwd=ROOT
    )
    if run.returncode == 2:
        pytest.skip(run.stderr.strip())
    report = run.stdout + run.stderr[-3000:]
    assert run.returncode == 0, report
    assert "2025-11-25: directly 84/84 checks passed; through Colonnade 84/84" in run.stdout, report
    assert "2026-07-28: directly 152/152 checks passed; through Colonnade 152/152" in run.stdout, report
