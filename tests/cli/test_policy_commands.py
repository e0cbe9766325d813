"""`colonnade policy test | eval`: the Rego tests as a pass/fail table, one decision explained,
and clear errors (never a traceback) for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.governance.policy.sources import SHIPPED_POLICIES
from tests.support.repo import ROOT

COLONNADE = Path(sys.executable).with_name("colonnade")
EXAMPLES = SHIPPED_POLICIES / "examples"
runner = CliRunner()


def _config(tmp_path: Path, **policy: object) -> Path:
    config = tmp_path / "colonnade.yaml"
    config.write_text(json.dumps({"data_dir": str(tmp_path / "data"), "policy": policy}))
    return config


def test_the_shipped_policies_pass_their_tests(tmp_path: Path) -> None:
    config = str(_config(tmp_path, builtin=True))
    result = runner.invoke(app, ["-c", config, "policy", "test"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "test_a_destructive_tool_needs_approval" in result.output and "PASS" in result.output
    assert "4/4 passed" in result.output


def test_no_policies_configured_says_how_to_name_some(tmp_path: Path) -> None:
    result = runner.invoke(app, ["-c", str(_config(tmp_path)), "policy", "test"], env={"COLUMNS": "200"})
    assert result.exit_code != 0
    assert "no policies are configured" in result.output and "policy.builtin: true" in result.output


def test_a_failing_test_fails_the_command_and_json_says_which(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "p.rego").write_text('package colonnade.policy\n\nimport rego.v1\n\ndeny contains "no" if true\n')
    (mine / "p_test.rego").write_text(
        "package colonnade.p_test\n\nimport rego.v1\n\n"
        "test_nothing_is_denied if count(data.colonnade.decision.deny) == 0\n\n"
        "test_everything_is_denied if count(data.colonnade.decision.deny) == 1\n"
    )
    result = runner.invoke(app, ["policy", "test", str(mine), "--format", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert {test["name"]: test["outcome"] for test in report["tests"]} == {
        "test_nothing_is_denied": "fail",
        "test_everything_is_denied": "pass",
    }
    assert report["passed"] == 1 and report["version"].startswith("sha256:")


def test_eval_explains_which_rules_fired(tmp_path: Path) -> None:
    args = [
        "-c",
        str(_config(tmp_path, directories=[str(EXAMPLES)], time_zones={"acme": "Europe/Paris"})),
        "policy",
        "eval",
        "--tool",
        "acme:billing:create_invoice",
        "--principal",
        "agent:invoice-bot",
        "--contract",
        str(ROOT / "examples" / "contracts"),
        "--at",
        "2026-11-29T20:00:00+00:00",
        "--args",
        '{"customer_id": "C-1", "amount": 12}',
        "--format",
        "json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output  # denied
    report = json.loads(result.output)
    assert report["decision"]["deny"] == [
        "agents may not call write tools outside business hours (9:00-18:00 Europe/Paris, Sunday now)"
    ]
    assert (
        report["input"]["time"]["local"]["hour"] == 21 and report["input"]["tool"]["side_effects"] == "write"
    )
    void = runner.invoke(
        app,
        [
            *("policy", "eval", "--tool", "acme:billing:void_invoice", "--side-effects", "destructive"),
            *("--policies", str(SHIPPED_POLICIES)),
        ],
        env={"COLUMNS": "200"},
    )
    assert void.exit_code == 0, void.output
    assert "ALLOWED" in void.output and "obligations: require_approval" in void.output


def test_bad_input_gets_a_clear_message_not_a_traceback(tmp_path: Path) -> None:
    for args, message in (
        (["--tool", "a:b:c", "--args", "[1]"], "--args must be a JSON object"),
        (["--tool", "a:b:c", "--args", "{"], "--args is not JSON"),
        (["--tool", "nope"], "--tool must be a canonical name"),
        (
            ["--tool", "a:b:c", "--principal", "robot:x", "--side-effects", "read"],
            "--principal must be kind:id",
        ),
        (["--tool", "a:b:c"], "no configured contract serves a:b:c"),
    ):
        done = subprocess.run(
            [str(COLONNADE), "-c", str(_config(tmp_path)), "policy", "eval", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
