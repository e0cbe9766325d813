"""`colonnade tools describe NAME`: a tool by canonical, wire or bare name, over the configured catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from colonnade.cli import app
from tests.cli.test_route_tools_search import DEMO, environment

runner = CliRunner()


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo contracts, plus a twin of the CRM (`acme:crm-eu`) sharing its bare tool names."""
    twin = yaml.safe_load((DEMO / "crm.yaml").read_text(encoding="utf-8"))
    (tmp_path / "crm-eu.yaml").write_text(yaml.safe_dump({**twin, "name": "crm-eu"}), encoding="utf-8")
    for key, value in environment(tmp_path, DEMO, tmp_path / "crm-eu.yaml").items():
        if key.startswith("COLONNADE_"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize("name", ["get_invoice", "acme:billing:get_invoice", "acme__billing__get_invoice"])
def test_a_tool_is_described_by_any_of_its_names(name: str) -> None:
    result = runner.invoke(app, ["tools", "describe", name, "--format", "json"])
    assert result.exit_code == 0, result.output
    detail = json.loads(result.output)
    assert detail["canonical_name"] == "acme:billing:get_invoice"
    assert detail["input_schema"]["required"] == ["invoice_id"]


@pytest.mark.usefixtures("configured")
def test_the_text_form_names_the_tool_and_its_arguments() -> None:
    result = runner.invoke(app, ["tools", "describe", "get_invoice"])
    assert result.exit_code == 0, result.output
    assert "canonical name: acme:billing:get_invoice" in result.output
    assert "wire name: acme__billing__get_invoice" in result.output
    assert "arguments: invoice_id*" in result.output


@pytest.mark.usefixtures("configured")
def test_an_ambiguous_or_unknown_name_is_a_usage_error_that_helps() -> None:
    ambiguous = runner.invoke(app, ["tools", "describe", "get_customer"])
    assert ambiguous.exit_code == 2
    text = " ".join(ambiguous.output.split())
    assert "acme:crm:get_customer" in text and "acme:crm-eu:get_customer" in text
    unknown = runner.invoke(app, ["tools", "describe", "get_invoices"])
    assert unknown.exit_code == 2
    assert "did you mean get_invoice" in " ".join(unknown.output.split())
