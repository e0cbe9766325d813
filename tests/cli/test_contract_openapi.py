"""`colonnade contract import-openapi` and `export-openapi`.

Each command runs once through the real console script; the other paths use Typer's
CliRunner in-process.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.cli.contract_openapi import render_report
from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract
from colonnade.contracts.openapi import import_openapi
from colonnade.contracts.validate import validate_data

COLONNADE = Path(sys.executable).with_name("colonnade")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi"
CRM = Path(__file__).resolve().parents[2] / "examples" / "contracts" / "crm.yaml"

runner = CliRunner()


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(COLONNADE), *map(str, args)], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def test_import_through_the_console_script_writes_yaml_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "petstore.yaml"
    done = _run("contract", "import-openapi", FIXTURES / "petstore.yaml", "--tenant", "acme", "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert data["name"] == "swagger-petstore-openapi-3-0"
    assert [f for f in validate_data(data) if f.is_error] == []
    assert out.read_text(encoding="utf-8").startswith("# Draft contract imported from petstore.yaml")
    report = done.stderr
    assert "Imported operations" in report
    assert "Needs human review" in report
    assert "Skipped (not imported)" in report
    assert "POST /pet/{petId}/uploadImage (uploadFile)" in report
    assert "request body is application/octet-stream" in report
    assert f"9 imported, 9 need review, 1 need a human, 1 skipped -> {out}" in report


def test_export_through_the_console_script_writes_openapi(tmp_path: Path) -> None:
    out = tmp_path / "crm.openapi.json"
    done = _run("contract", "export-openapi", CRM, "-o", out)
    assert done.returncode == 0, done.stderr
    spec = json.loads(out.read_text(encoding="utf-8"))
    assert spec["openapi"] == "3.1.0"
    assert spec["paths"]["/customers"]["get"]["x-llm"]["tool_name"] == "search_customers"


def test_import_writes_to_stdout_and_the_report_to_stderr() -> None:
    result = _invoke("contract", "import-openapi", FIXTURES / "github.json", "--tenant", "acme")
    assert result.exit_code == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert data["name"] == "github-v3-rest-api"
    assert len(data["endpoints"]) == 6
    assert "issues_list_for_repo" in result.stderr
    assert "6 imported, 6 need review, 1 need a human, 0 skipped -> stdout" in result.stderr


def test_import_options_and_json_output(tmp_path: Path) -> None:
    out = tmp_path / "tasks.json"
    result = _invoke(
        "contract",
        "import-openapi",
        FIXTURES / "tasks_x_llm.yaml",
        "--tenant",
        "team-a",
        "--api",
        "tasks",
        "--base-url",
        "http://127.0.0.1:7000",
        "--output",
        out,
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert (data["name"], data["tenant"], data["backend"]["base_url"]) == (
        "tasks",
        "team-a",
        "http://127.0.0.1:7000",
    )
    Contract.model_validate(data)


def test_import_with_skips_still_exits_zero() -> None:
    result = _invoke("contract", "import-openapi", FIXTURES / "petstore.yaml", "--tenant", "acme")
    assert result.exit_code == 0
    assert "uploadFile" in result.stderr  # an application/octet-stream body
    assert "1 skipped" in result.stderr


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            "swagger: '2.0'\ninfo: {title: Old, version: '1'}\npaths: {}\n",
            "this is a Swagger 2.0 document; only OpenAPI 3.0 and 3.1 can be imported (at /swagger); "
            "convert it to OpenAPI 3 first",
        ),
        ("name: crm\nversion: 1.0.0\n", "not an OpenAPI document: the `openapi` field is missing"),
        (
            "openapi: 3.0.3\ninfo: {title: T, version: '1'}\nservers: [{url: /v1}]\npaths: {}\n",
            "spec.yaml:3:17: servers[0].url '/v1' is relative; a contract needs an absolute base URL "
            "(at /servers/0/url); give the API's absolute base URL with --base-url",
        ),
        (
            "openapi: 3.1.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://t.example.com'}]\n"
            "paths:\n  /a:\n    get:\n      responses:\n"
            "        '200': {$ref: '#/components/responses/Gone'}\n",
            "spec.yaml:8:23: $ref '#/components/responses/Gone' does not resolve: nothing at /components "
            "(at /paths/~1a/get/responses/200/$ref)",
        ),
        ("openapi: [unclosed\n", "spec.yaml:2:1: invalid YAML"),
    ],
)
def test_unusable_documents_exit_2_with_a_located_message(
    tmp_path: Path, document: str, expected: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(document, encoding="utf-8")
    result = _invoke("contract", "import-openapi", spec, "--tenant", "acme")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert expected in result.stderr.replace(str(tmp_path) + os.sep, "")
    assert "Traceback" not in result.stderr


def test_missing_spec_and_bad_options_exit_2(tmp_path: Path) -> None:
    missing = _invoke("contract", "import-openapi", tmp_path / "nope.yaml", "--tenant", "acme")
    assert missing.exit_code == 2
    assert "nope.yaml: file not found" in missing.stderr
    bad_tenant = _invoke("contract", "import-openapi", FIXTURES / "github.json", "--tenant", "Acme Inc")
    assert bad_tenant.exit_code == 2
    assert "tenant 'Acme Inc' is not kebab-case" in bad_tenant.stderr
    no_tenant = _invoke("contract", "import-openapi", FIXTURES / "github.json")
    assert no_tenant.exit_code == 2
    unwritable = _invoke(
        "contract",
        "import-openapi",
        FIXTURES / "github.json",
        "--tenant",
        "acme",
        "-o",
        tmp_path / "no" / "x.yaml",
    )
    assert unwritable.exit_code == 2
    assert "cannot write" in unwritable.stderr


def test_export_to_stdout_round_trips_through_import(tmp_path: Path) -> None:
    result = _invoke("contract", "export-openapi", CRM)
    assert result.exit_code == 0, result.stderr
    spec_path = tmp_path / "crm.openapi.yaml"
    spec_path.write_text(result.stdout, encoding="utf-8")
    back = _invoke("contract", "import-openapi", spec_path, "--tenant", "acme")
    assert back.exit_code == 0, back.stderr
    original = Contract.model_validate(load_document(CRM).data)
    imported = Contract.model_validate(yaml.safe_load(back.stdout))
    assert sorted(op.canonical_name for op in imported.operations()) == sorted(
        op.canonical_name for op in original.operations()
    )
    assert "6 imported, 0 need review, 0 need a human, 0 skipped" in back.stderr


def test_export_refuses_what_is_not_a_contract(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: crm\nversion: one\n", encoding="utf-8")
    result = _invoke("contract", "export-openapi", broken)
    assert result.exit_code == 2
    assert "broken.yaml: not a valid contract (" in result.stderr
    assert "run `colonnade contract validate" in result.stderr
    missing = _invoke("contract", "export-openapi", tmp_path / "missing.yaml")
    assert missing.exit_code == 2
    assert "missing.yaml: file not found" in missing.stderr


def test_help_documents_both_commands() -> None:
    for command, options in (
        ("import-openapi", ("--tenant", "--api", "--base-url", "--output")),
        ("export-openapi", ("--output",)),
    ):
        result = _invoke("contract", command, "--help")
        assert result.exit_code == 0
        for option in options:
            assert option in result.stdout


def test_report_lists_review_reasons_skips_and_notes() -> None:
    result = import_openapi(load_document(FIXTURES / "forest_edge_cases.yaml").data, tenant="acme")
    buffer = io.StringIO()
    render_report(result, "forest.yaml", Console(file=buffer, width=250, no_color=True))
    text = buffer.getvalue()
    assert "get_taxonomy_by_rank" in text
    assert "no x-llm: drafted from summary; side_effects 'read' guessed from GET" in text
    assert (
        "GET /threads/{id}" in text
        and "required cookie parameter 'auth': contracts cannot send cookies" in text
    )
    assert "webhooks describe calls the API makes, not tools; not imported" in text
    assert text.rstrip().endswith("7 imported, 7 need review, 0 need a human, 2 skipped -> forest.yaml")


def test_the_import_report_as_json_goes_to_stdout_when_the_contract_goes_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "pets.yaml"
    done = _invoke(
        "contract", "import-openapi", FIXTURES / "petstore_public.yaml", "-t", "acme", "--api", "pets",
        "--base-url", "http://127.0.0.1:9/api/v3", "-o", out, "--format", "json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["written_to"] == str(out)
    assert {"imported", "needs_review", "needs_human", "skipped", "notes"} <= set(report)
    assert report["needs_human"][0] == {
        "subject": "security scheme petstore_auth",
        "message": "oauth2: obtain an access token for the gateway (flows: implicit) and keep it in the "
        "secret PETS_PETSTORE_AUTH; it is sent as a bearer token and not refreshed by the gateway",
    }
    find = next(op for op in report["imported"] if op["operation_id"] == "findPetsByStatus")
    assert find == {
        "method": "GET",
        "path": "/pet/findByStatus",
        "operation_id": "findPetsByStatus",
        "tool_name": "find_pets_by_status",
        "needs_review": True,
    }
    assert report["skipped"][0]["operation_id"] == "uploadFile"


def test_the_text_report_lists_what_needs_a_human(tmp_path: Path) -> None:
    done = _invoke(
        "contract", "import-openapi", FIXTURES / "spotify_like.yaml", "-t", "acme", "-o", tmp_path / "s.yaml"
    )
    assert done.exit_code == 0, done.output
    assert "Needs a human (credentials and access)" in done.stderr
    assert "SPOTIFY_WEB_API_OAUTH_2_0" in done.stderr
