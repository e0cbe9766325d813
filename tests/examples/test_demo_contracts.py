"""The demo contracts: valid, complete, gated where destructive, synthetic, and in step with the demo."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from colonnade.catalog.http_binding import ParamLocation, binding_for
from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract, Operation, SideEffects

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_FILES = sorted((ROOT / "examples" / "contracts").glob("*.yaml"))
COLONNADE = Path(sys.executable).with_name("colonnade")

EXPECTED_TOOLS = {
    "acme:crm:search_customers",
    "acme:crm:get_customer",
    "acme:crm:create_customer",
    "acme:crm:update_customer",
    "acme:crm:delete_customer",
    "acme:crm:validate_email_format",
    "acme:billing:list_invoices",
    "acme:billing:get_invoice",
    "acme:billing:create_invoice",
    "acme:billing:void_invoice",
    "acme:billing:refund_invoice",
}


@pytest.fixture(scope="module")
def all_operations(demo_contracts: dict[str, Contract]) -> list[Operation]:
    return [op for contract in demo_contracts.values() for op in contract.operations()]


def test_the_demo_has_the_crm_and_billing_contracts(demo_contracts: dict[str, Contract]) -> None:
    assert [p.name for p in CONTRACT_FILES] == ["billing.yaml", "crm.yaml"]
    assert sorted(demo_contracts) == ["billing", "crm"]
    for contract in demo_contracts.values():
        assert (contract.tenant, contract.version, contract.status.value) == ("acme", "1.0.0", "published")
        assert contract.backend.base_url == "http://127.0.0.1:8766"
        assert contract.backend.auth is None


@pytest.mark.parametrize("path", CONTRACT_FILES, ids=lambda p: p.name)
def test_each_contract_has_no_validator_findings(path: Path) -> None:
    validate = pytest.importorskip("colonnade.contracts.validate")
    findings = validate.validate_document(load_document(path))
    assert [f"{f.code} {f.path}: {f.message}" for f in findings] == []


def test_tool_names_are_the_documented_ones(all_operations: list[Operation]) -> None:
    names = [op.canonical_name for op in all_operations]
    assert len(names) == len(set(names))
    assert set(names) == EXPECTED_TOOLS


def test_every_side_effects_value_is_covered(all_operations: list[Operation]) -> None:
    effects = {op.endpoint.llm.side_effects for op in all_operations if op.endpoint.llm}
    assert effects == set(SideEffects)


def test_every_endpoint_is_a_fully_described_tool(all_operations: list[Operation]) -> None:
    for op in all_operations:
        endpoint, llm = op.endpoint, op.endpoint.llm
        assert endpoint.mcp and llm is not None, op
        assert endpoint.input_schema is not None and endpoint.output_schema is not None, op
        assert endpoint.tags, op
        assert len(llm.summary) <= 160 and len(llm.intent) <= 360, op
        assert 1 <= len(llm.examples) <= 2, op
        assert llm.tool_name == endpoint.operation_id, op


def test_destructive_operations_are_gated(all_operations: list[Operation]) -> None:
    effects = {op: op.endpoint.llm.side_effects for op in all_operations if op.endpoint.llm}
    destructive = [op for op, effect in effects.items() if effect is SideEffects.DESTRUCTIVE]
    assert {op.name for op in destructive} == {"delete_customer", "void_invoice", "refund_invoice"}
    for op in destructive:
        assert op.endpoint.llm is not None
        assert op.endpoint.llm.requires_human_approval is True, op
        assert op.endpoint.llm.safe_for_agents is False, op


def _object_schemas(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        if "properties" in schema:
            yield where, schema
        for key, value in schema.items():
            yield from _object_schemas(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _object_schemas(value, f"{where}/{index}")


def test_schemas_are_closed_json_schema_2020_12(all_operations: list[Operation]) -> None:
    for op in all_operations:
        for field in ("input_schema", "output_schema"):
            schema = getattr(op.endpoint, field)
            Draft202012Validator.check_schema(schema)
            for where, node in _object_schemas(schema, f"{op.name}/{field}"):
                assert node.get("additionalProperties") is False, where


def test_only_the_idempotency_key_needs_an_explicit_location(all_operations: list[Operation]) -> None:
    explicit = {
        (op.name, spec.name, spec.location, spec.wire_name)
        for op in all_operations
        for spec in binding_for(op).params
        if "x-in" in op.endpoint.effective_input_schema()["properties"][spec.name]
    }
    assert explicit == {("create_invoice", "idempotency_key", ParamLocation.HEADER, "Idempotency-Key")}


_EMAIL = re.compile(r"[^\s@]+@([^\s@]+)")
_LONG_DIGITS = re.compile(r"\d[\d -]{10,}\d")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str | int) and not isinstance(value, bool):
        yield str(value)


def test_examples_use_synthetic_data_only(all_operations: list[Operation]) -> None:
    for op in all_operations:
        assert op.endpoint.llm is not None
        for example in op.endpoint.llm.examples:
            for text in _strings(example.model_dump()):
                assert all(domain == "example.com" for domain in _EMAIL.findall(text)), (op, text)
                assert _LONG_DIGITS.search(text) is None, (op, text)


def test_the_validate_command_accepts_the_demo_contracts() -> None:
    """The issue's acceptance check, through the real console script, warnings counted as errors."""
    result = subprocess.run(
        [str(COLONNADE), "contract", "validate", "--strict", *map(str, CONTRACT_FILES)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 2 and "No such command" in result.stderr:
        pytest.skip("`colonnade contract validate` is not registered in this build")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_broken_copy_reports_the_right_codes() -> None:
    """The issue's other acceptance check: break the CRM demo on purpose, one rule at a time."""
    validate = pytest.importorskip("colonnade.contracts.validate")
    data = load_document(ROOT / "examples" / "contracts" / "crm.yaml").data
    by_id = {endpoint["operation_id"]: endpoint for endpoint in data["endpoints"]}
    by_id["delete_customer"]["llm"].update(requires_human_approval=False, safe_for_agents=True)
    by_id["get_customer"]["llm"]["side_effects"] = "write"
    by_id["create_customer"]["llm"]["summary"] = "Create a customer. " * 10
    by_id["search_customers"]["llm"]["examples"][0]["input"]["q"] = "someone@acme-corp.io"
    by_id["update_customer"]["llm"]["tool_name"] = "get_customer"
    by_id["validate_email_format"]["llm"]["examples"][1]["input"] = {"address": "x"}
    found = {(f.code, f.path) for f in validate.validate_data(data)}
    assert found >= {
        ("UAC003", "/endpoints/4/llm/requires_human_approval"),
        ("UAC014", "/endpoints/4/llm/safe_for_agents"),
        ("UAC005", "/endpoints/1/llm/side_effects"),
        ("UAC006", "/endpoints/2/llm/summary"),
        ("UAC012", "/endpoints/0/llm/examples/0/input/q"),
        ("UAC008", "/endpoints/3/llm/tool_name"),
    }
    codes = {code for code, _ in found}
    assert codes == {"UAC003", "UAC005", "UAC006", "UAC008", "UAC010", "UAC012", "UAC014"}
