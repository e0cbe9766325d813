"""`colonnade contract validate` and `colonnade contract schema`, through the real console script."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.contracts.uac_json_schema import PUBLISHED_SCHEMA_PATH

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "contracts"
COLONNADE = ROOT / ".venv" / "bin" / "colonnade"

runner = CliRunner()


def run(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    return subprocess.run(
        [str(COLONNADE), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def invoke(*args: str | Path) -> tuple[int, str]:
    result = runner.invoke(app, ["contract", *map(str, args)])
    return result.exit_code, result.output


def test_valid_contract_exits_0() -> None:
    result = run("contract", "validate", FIXTURES / "valid.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{FIXTURES / 'valid.yaml'}: ok" in result.stdout
    assert result.stdout.strip().endswith("0 errors, 0 warnings in 1 file")


def test_broken_contract_exits_1_with_every_finding_located() -> None:
    path = FIXTURES / "broken.yaml"
    result = run("contract", "validate", path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    findings = [line for line in lines if line.startswith(f"{path}:")]
    assert [line.split()[1] for line in findings] == [
        "UAC001",
        "UAC001",
        "UAC009",
        "UAC003",
        "UAC010",
        "UAC012",
    ]
    assert findings[0].startswith(f"{path}:2:7  UAC001  error  /name  ")
    assert findings[3].startswith(f"{path}:20:32  UAC003  error  /endpoints/0/llm/requires_human_approval  ")
    assert sum(1 for line in lines if line.startswith("    fix: ")) == 6
    assert lines[-1] == "6 errors, 0 warnings in 1 file"


def test_json_format_has_the_documented_shape() -> None:
    result = run(
        "contract", "validate", "--format", "json", FIXTURES / "broken.yaml", FIXTURES / "valid.yaml"
    )
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert list(report) == ["files", "errors", "warnings"]
    assert (report["errors"], report["warnings"]) == (6, 0)
    assert [list(f) for f in report["files"]] == [["path", "findings"], ["path", "findings"]]
    assert report["files"][1] == {"path": str(FIXTURES / "valid.yaml"), "findings": []}
    first = report["files"][0]["findings"][0]
    assert first == {
        "code": "UAC001",
        "severity": "error",
        "path": "/name",
        "message": first["message"],
        "fix": first["fix"],
        "line": 2,
        "column": 7,
    }
    assert "Support Desk" in first["message"]


def test_warnings_pass_unless_strict() -> None:
    path = FIXTURES / "warnings_only.yaml"
    code, output = invoke("validate", path)
    assert code == 0
    assert "UAC004  warning  /endpoints/0" in output
    assert output.strip().endswith("0 errors, 1 warning in 1 file")
    assert invoke("validate", "--strict", path)[0] == 1


def test_yaml_syntax_error_exits_2_and_other_files_are_still_checked() -> None:
    bad = FIXTURES / "syntax_error.yaml"
    result = run("contract", "validate", bad, FIXTURES / "broken.yaml")
    assert result.returncode == 2
    assert f"{bad}:5:4  LOAD  error" in result.stdout
    assert "invalid YAML" in result.stdout
    assert "UAC003" in result.stdout


def test_yaml_syntax_error_in_json_output() -> None:
    code, output = invoke("validate", "-f", "json", FIXTURES / "syntax_error.yaml")
    assert code == 2
    (finding,) = json.loads(output)["files"][0]["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("LOAD", 5, 4)


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, output = invoke("validate", tmp_path / "nope.yaml", FIXTURES / "valid.yaml")
    assert code == 2
    assert "nope.yaml  LOAD  error  (document)  file not found" in output
    assert "valid.yaml: ok" in output


def test_directory_validates_each_contract_file_inside(tmp_path: Path) -> None:
    for name in ("valid.yaml", "warnings_only.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    shutil.copy(FIXTURES / "valid.yaml", tmp_path / "copy.yml")
    (tmp_path / "same.json").write_text(
        json.dumps(yaml.safe_load((FIXTURES / "valid.yaml").read_text())), encoding="utf-8"
    )
    (tmp_path / "notes.md").write_text("not a contract", encoding="utf-8")
    (tmp_path / "nested").mkdir()
    shutil.copy(FIXTURES / "broken.yaml", tmp_path / "nested" / "broken.yaml")
    code, output = invoke("validate", "-f", "json", tmp_path)
    assert code == 0
    report = json.loads(output)
    assert [Path(f["path"]).name for f in report["files"]] == [
        "copy.yml",
        "same.json",
        "valid.yaml",
        "warnings_only.yaml",
    ]
    assert (report["errors"], report["warnings"]) == (0, 1)


def test_empty_directory_exits_2(tmp_path: Path) -> None:
    code, output = invoke("validate", tmp_path)
    assert code == 2
    assert "no .yaml/.yml/.json files in directory" in output


def test_unknown_format_is_a_usage_error() -> None:
    code, output = invoke("validate", "--format", "xml", FIXTURES / "valid.yaml")
    assert code == 2
    assert "xml" in output


def test_help_documents_the_options() -> None:
    code, output = invoke("validate", "--help")
    assert code == 0
    for option in ("--strict", "--format", "text|json", "Exit codes"):
        assert option in output


def test_schema_prints_the_published_schema() -> None:
    code, output = invoke("schema")
    assert code == 0
    assert output == PUBLISHED_SCHEMA_PATH.read_text(encoding="utf-8")


def test_schema_writes_a_file(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "uac.schema.json"
    code, _ = invoke("schema", "-o", out)
    assert code == 0
    assert json.loads(out.read_text(encoding="utf-8"))["$id"].endswith("uac.schema.json")


def test_schema_to_an_unwritable_place_is_a_clean_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, output = invoke("schema", "-o", blocker / "uac.schema.json")
    assert code == 2
    assert "cannot write" in output


@pytest.mark.skipif(
    not sorted((ROOT / "examples" / "contracts").glob("*.yaml")), reason="no demo contracts yet"
)
def test_demo_contracts_validate_clean() -> None:
    code, output = invoke("validate", "--strict", ROOT / "examples" / "contracts")
    assert code == 0, output


def test_a_file_that_is_not_utf8_says_where_and_how_to_convert_it(tmp_path: Path) -> None:
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes((FIXTURES / "valid.yaml").read_bytes() + "# caf\u00e9\n".encode("latin-1"))
    line = (FIXTURES / "valid.yaml").read_bytes().count(b"\n") + 1
    code, output = invoke("validate", "-f", "json", latin)
    assert code == 2
    (finding,) = json.loads(output)["files"][0]["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("LOAD", line, 6)
    assert "is not UTF-8 text (byte 0xe9" in finding["message"]
    assert "save the file as UTF-8" in finding["fix"] and "iconv" in finding["fix"]
    served = run("serve", "--stdio", "-C", latin)
    assert served.returncode == 2 and "Traceback" not in served.stderr, served.stderr
    assert f"{latin}:{line}:6: is not UTF-8 text" in " ".join(served.stderr.split())
