"""The validator's public API: ordering, positions, parsing, loading, and odd documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from colonnade.contracts import violations
from colonnade.contracts.findings import Severity
from colonnade.contracts.load import ContractLoadError, load_document, parse_text
from colonnade.contracts.model import Contract
from colonnade.contracts.rules import Subject, raw_tool_names
from colonnade.contracts.validate import (
    ContractInvalid,
    load_contract,
    parse_contract,
    validate_data,
    validate_document,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"
BASE: dict[str, Any] = yaml.safe_load((FIXTURES / "valid.yaml").read_text(encoding="utf-8"))


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def test_findings_come_in_document_order() -> None:
    doc = base()
    doc["endpoints"][2]["llm"]["requires_human_approval"] = False  # UAC003, late in the document
    doc["version"] = 2  # UAC001, early
    doc["endpoints"][0]["llm"]["summary"] = "s" * 200  # UAC006, in between
    assert [(f.code, f.path) for f in validate_data(doc)] == [
        ("UAC001", "/version"),
        ("UAC006", "/endpoints/0/llm/summary"),
        ("UAC003", "/endpoints/2/llm/requires_human_approval"),
    ]


def test_a_schema_failure_does_not_hide_semantic_findings() -> None:
    doc = base()
    doc["version"] = 1.0
    doc["endpoints"][0]["llm"]["side_effects"] = 7
    doc["endpoints"][2]["llm"]["requires_human_approval"] = "no"
    doc["endpoints"][1]["llm"]["examples"][0]["input"]["requester"] = "jane.doe@acme-corp.com"
    codes = [f.code for f in validate_data(doc)]
    assert codes == ["UAC001", "UAC002", "UAC012", "UAC002", "UAC003"]


def test_validate_document_fills_line_and_column() -> None:
    text = (FIXTURES / "valid.yaml").read_text(encoding="utf-8").replace("status: published", "status: live")
    findings = validate_document(parse_text(text, "desk.yaml"))
    assert len(findings) == 1
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith("status:"))
    assert (findings[0].line, findings[0].column) == (line, len("status: ") + 1)


def test_missing_field_points_at_its_parent_position() -> None:
    text = "name: x\nversion: 1.0.0\n"
    findings = validate_document(parse_text(text, "x.yaml"))
    missing = [f for f in findings if f.path == "/tenant"]
    assert len(missing) == 1
    assert (missing[0].line, missing[0].column) == (1, 1)


def test_parse_contract_returns_the_model() -> None:
    contract = parse_contract(base())
    assert isinstance(contract, Contract)
    assert [op.canonical_name for op in contract.operations()][:2] == [
        "acme:support-desk:get_ticket",
        "acme:support-desk:create_ticket",
    ]


def test_parse_contract_accepts_warnings() -> None:
    doc = base()
    doc["endpoints"][0]["llm"]["summary"] = "s" * 200
    assert parse_contract(doc).endpoints[0].llm is not None


def test_parse_contract_raises_with_every_finding() -> None:
    doc = base()
    doc["status"] = "live"
    doc["endpoints"][0]["llm"]["tool_name"] = "bad name"
    doc["endpoints"][0]["llm"]["intent"] = "i" * 400
    with pytest.raises(ContractInvalid) as caught:
        parse_contract(doc)
    assert [f.code for f in caught.value.findings] == ["UAC001", "UAC007", "UAC009"]
    assert [f.code for f in caught.value.errors] == ["UAC001", "UAC009"]
    assert "2 error(s)" in str(caught.value)


def test_load_contract_reads_and_validates(tmp_path: Path) -> None:
    good = tmp_path / "desk.yaml"
    good.write_text(yaml.safe_dump(BASE), encoding="utf-8")
    assert load_contract(good).name == "support-desk"

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**BASE, "tenant": "Acme Corp"}), encoding="utf-8")
    with pytest.raises(ContractInvalid) as caught:
        load_contract(bad)
    assert caught.value.path == str(bad)
    assert [(f.code, f.path) for f in caught.value.findings] == [("UAC001", "/tenant")]

    with pytest.raises(ContractLoadError):
        load_contract(tmp_path / "missing.yaml")


def test_load_contract_reports_positions(tmp_path: Path) -> None:
    path = tmp_path / "desk.yaml"
    path.write_text("name: desk\nversion: one\n", encoding="utf-8")
    with pytest.raises(ContractInvalid) as caught:
        load_contract(path)
    version = next(f for f in caught.value.findings if f.path == "/version")
    assert (version.line, version.column) == (2, 10)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (None, "the document is empty"),
        ([1, 2], "the contract must be a mapping, got a list of 2 item(s)"),
        ("name: x", 'the contract must be a mapping, got the string "name: x"'),
    ],
)
def test_a_document_that_is_not_a_mapping(data: Any, message: str) -> None:
    assert [(f.code, f.path, f.message) for f in validate_data(data)] == [("UAC001", "", message)]


def test_yaml_boolean_keys_are_reported_and_dates_read_as_strings() -> None:
    text = (FIXTURES / "valid.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "verbose: {type: boolean, x-in: query}",
        "verbose: {type: boolean, x-in: query}\n        on: {type: string}",
    )
    text = text.replace("input: {ticket_id: T-1001}", "input: {ticket_id: T-1001, on: 2024-01-15}", 1)
    findings = validate_document(parse_text(text, "desk.yaml"))
    assert [(f.code, f.path) for f in findings] == [
        ("UAC001", "/endpoints/0/input_schema/properties/True"),
        ("UAC001", "/endpoints/0/llm/examples/0/input/True"),
    ]
    assert "YAML reads unquoted yes/no/on/off" in findings[0].message
    assert findings[0].fix == "quote the key"


def test_a_yaml_date_in_an_example_is_read_as_its_iso_string() -> None:
    doc = base()
    doc["endpoints"][0]["input_schema"]["properties"]["since"] = {"type": "string", "format": "date"}
    doc["endpoints"][0]["llm"]["examples"][0]["input"]["since"] = yaml.safe_load("2024-01-15")
    assert validate_data(doc) == []
    assert parse_contract(doc).endpoints[0].llm.examples[0].input["since"] == "2024-01-15"  # type: ignore[union-attr]


def test_recursive_alias_is_reported_not_followed() -> None:
    data = yaml.safe_load("name: &x [1, *x]\n")
    findings = validate_data(data)
    assert ("UAC001", "/name/1") in [(f.code, f.path) for f in findings]


def test_too_deep_a_document_gives_one_finding() -> None:
    deep: Any = "leaf"
    for _ in range(violations.MAX_DEPTH + 5):
        deep = {"x": deep}
    findings = validate_data({**base(), "description": deep})
    assert len(findings) == 1
    assert "deeper than" in findings[0].message


def test_alias_bomb_stops_at_the_node_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(violations, "MAX_NODES", 5_000)
    bomb = yaml.safe_load(
        "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    )
    findings = validate_data(bomb)
    assert [f.code for f in findings] == ["UAC001"]
    assert "more than 5000 values" in findings[0].message


def _with_two_methods(doc: dict[str, Any]) -> dict[str, Any]:
    doc["endpoints"][1]["methods"] = ["POST", "PUT"]
    del doc["endpoints"][0]["llm"]
    return doc


@pytest.mark.parametrize("make", [base, lambda: _with_two_methods(base())], ids=["base", "multi-method"])
def test_raw_tool_names_mirror_operation_tool_names(make: Any) -> None:
    doc = make()
    expected = [op.tool_name for op in Contract.model_validate(doc).operations()]
    assert [t.name for t in raw_tool_names(Subject(doc))] == expected


def _example_files() -> list[Path]:
    return sorted(EXAMPLES.glob("*.yaml"))


@pytest.mark.skipif(not _example_files(), reason="examples/contracts has no demo contracts yet")
@pytest.mark.parametrize("path", _example_files(), ids=lambda p: p.name)
def test_demo_contracts_have_no_findings(path: Path) -> None:
    findings = validate_document(load_document(path))
    assert [(f.code, f.path, f.message) for f in findings] == []
    assert all(f.severity is not Severity.ERROR for f in findings)


def test_the_contract_adrs_own_example_validates_without_findings() -> None:
    """ADR-067's endpoint: an object as expected_output_contains and its own backend_url."""
    doc = load_document(FIXTURES / "adr_customer.json")
    assert validate_document(doc) == []
    contract = load_contract(FIXTURES / "adr_customer.json")
    example = contract.endpoints[0].llm.examples[0]  # type: ignore[union-attr]
    assert example.expected_output_contains == {"id": "cust_123"}
    assert contract.endpoints[0].backend_url == "https://backend.example.com/customers"
