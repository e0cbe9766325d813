"""`colonnade errors`: the taxonomy as a table, as Markdown, and written to a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from colonnade.calls.call_errors import REGISTRY
from colonnade.calls.errors_doc import render_markdown
from colonnade.cli import app

COLONNADE = Path(sys.executable).with_name("colonnade")
runner = CliRunner()


def test_table_lists_every_code_with_its_status() -> None:
    result = runner.invoke(app, ["errors"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    for spec in REGISTRY.values():
        line = next(line for line in result.output.splitlines() if f" {spec.code} " in line)
        assert spec.status.value in line
    assert "Invalid request" in result.output and "Data integrity" in result.output


def test_markdown_is_the_reference_page() -> None:
    result = runner.invoke(app, ["errors", "--markdown"])
    assert result.exit_code == 0
    assert result.output == render_markdown()


def test_output_file_is_written_with_parents(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "errors.md"
    result = runner.invoke(app, ["errors", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8") == render_markdown()
    assert f"{len(REGISTRY)} codes" in result.output


def test_unwritable_output_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    result = runner.invoke(app, ["errors", "-o", str(blocker / "errors.md")])
    assert result.exit_code == 2
    assert "cannot write" in result.output
    assert "Traceback" not in result.output


def test_real_console_script(tmp_path: Path) -> None:
    target = tmp_path / "errors.md"
    completed = subprocess.run(
        [str(COLONNADE), "errors", "--output", str(target)], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert target.read_text(encoding="utf-8") == render_markdown()
    shown = subprocess.run([str(COLONNADE), "errors"], capture_output=True, text=True, check=False)
    assert shown.returncode == 0 and "I-REQ-ENVELOPE" in shown.stdout
