"""docs/policy.md's examples work as written: its Rego compiles and decides as the text says, and every
`colonnade policy` line of its shell block runs from a checkout (with the Rego saved in ./policies)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from colonnade.config import Settings

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
COLONNADE = Path(sys.executable).with_name("colonnade")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC, re.DOTALL | re.MULTILINE)


def _commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip()]


def _checkout(tmp_path: Path) -> Path:
    """A folder that reads like the checkout, plus ./policies holding the doc's Rego."""
    (tmp_path / "policies").mkdir()
    for number, rego in enumerate(_blocks("rego")):
        (tmp_path / "policies" / f"doc_{number}.rego").write_text(rego, encoding="utf-8")
    for name in ("examples", "src"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def test_every_policy_command_of_the_doc_runs_as_written(tmp_path: Path) -> None:
    cwd = _checkout(tmp_path)
    (shell,) = [block for block in _blocks("bash") if "colonnade policy" in block]
    commands = _commands(shell)
    assert len(commands) == 5
    base = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    outputs = []
    for command in commands:
        words = shlex.split(command)
        env = dict(base, COLONNADE_DATA_DIR=str(tmp_path / "data"), COLUMNS="200")
        while "=" in words[0]:
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        assert words[0] == "colonnade", command
        run = subprocess.run(
            [str(COLONNADE), *words[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        assert "Traceback" not in run.stderr, (command, run.stderr)
        expected = 1 if ("--at 2026-11-29T20:00" in command or "amount" in command) else 0  # denied
        assert run.returncode == expected, (command, run.stdout, run.stderr)
        outputs.append(run.stdout)
    refund = outputs[-1]
    assert "refunds above 1000 need a ticket" in refund and "agents sign every refund" in refund
    assert "customer.email" in refund


def test_the_policy_settings_of_the_doc_load(tmp_path: Path) -> None:
    (settings,) = [yaml.safe_load(block) for block in _blocks("yaml") if "policy:" in block]
    loaded = Settings.model_validate(settings)
    assert loaded.policy.directories == [Path("./policies")]
    assert loaded.policy.data["business_hours"]["start"] == 8
