"""`colonnade tools schemas --out DIR`: per-tool request and response schemas that real calls satisfy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from colonnade.cli import app
from examples.demo_backend import create_app
from tests.cli.test_route_tools_search import environment
from tests.support.loopback import serve_in_thread
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings, serve_gateway

runner = CliRunner()
CUSTOMER = "acme__crm__get_customer"


@pytest.fixture(scope="module")
def backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo backend on loopback, for the calls whose answers the exported schemas must accept."""
    with serve_in_thread(create_app(tmp_path_factory.mktemp("backend") / "demo.db"), lifespan="on") as url:
        yield url


def export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, contracts: list[Path], *args: str) -> Path:
    for key, value in environment(tmp_path, *contracts).items():
        if key.startswith("COLONNADE_"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "schemas"
    result = runner.invoke(app, ["tools", "schemas", "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    assert "wrote the request and response schemas of" in result.output
    return out


def validator(path: Path) -> Draft202012Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(check: Draft202012Validator, document: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in check.iter_errors(document)]


def test_every_tool_gets_two_files_that_real_calls_satisfy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend_url: str
) -> None:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    out = export(tmp_path, monkeypatch, contracts)
    requests = sorted(p.name for p in out.glob("*.request.schema.json"))
    responses = sorted(p.name for p in out.glob("*.response.schema.json"))
    assert len(requests) == len(responses) >= 5
    assert f"{CUSTOMER}.request.schema.json" in requests
    request_check = validator(out / f"{CUSTOMER}.request.schema.json")
    response_check = validator(out / f"{CUSTOMER}.response.schema.json")

    good = {"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}}
    assert errors(request_check, good) == []
    assert errors(request_check, {**good, "tool_id": CUSTOMER}) == []
    assert errors(request_check, {**good, "tool_id": "acme:crm:search_customers"}), "another tool's name"
    assert errors(request_check, {**good, "input": {"customer_id": 7}}), "the tool's input schema applies"
    assert errors(request_check, {**good, "input": {}}), "the tool's required arguments apply"

    with serve_gateway(gateway_settings(tmp_path / "gateway", contracts)) as running:
        answered = running.client.post("/v1/calls", json=good).json()
        missing = running.client.post("/v1/calls", json={**good, "input": {"customer_id": "C-9999"}}).json()
    assert answered["status"] == "success"
    assert errors(response_check, answered) == []
    assert errors(response_check, missing) == [] and missing["status"] == "terminal_error"
    drifted = {**answered, "output": {"id": 5}}
    assert errors(response_check, drifted), "the tool's output schema applies to a success"


def test_version_2_response_schemas_describe_the_full_envelope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend_url: str
) -> None:
    contracts = [demo_contract_file(tmp_path, "billing", backend_url)]
    out = export(tmp_path, monkeypatch, contracts, "--envelope-version", "2")
    schema = json.loads((out / "acme__billing__void_invoice.response.schema.json").read_text("utf-8"))
    assert schema["properties"]["envelope_version"]["const"] == 2
    assert "pending" in schema["properties"]


def test_a_file_in_the_way_or_a_bad_version_is_a_usage_error(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["tools", "schemas", "--out", str(taken)], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "is a file, not a folder" in result.output
    wrong = runner.invoke(app, ["tools", "schemas", "--out", str(tmp_path / "x"), "--envelope-version", "3"])
    assert wrong.exit_code == 2
    assert "--envelope-version" in wrong.output
