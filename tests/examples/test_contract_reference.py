"""docs/contract-reference.md stays true to the model, the validator and its own example."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from colonnade.contracts.load import parse_text
from colonnade.contracts.model import (
    AuthType,
    Backend,
    BackendAuth,
    Classification,
    Contract,
    ContractStatus,
    Endpoint,
    HttpMethod,
    LlmBlock,
    LlmExample,
    SideEffects,
)

ENUMS = [SideEffects, ContractStatus, Classification, AuthType, HttpMethod]

DOC = Path(__file__).resolve().parents[2] / "docs" / "contract-reference.md"


@pytest.fixture(scope="module")
def text() -> str:
    return DOC.read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    """The body of a `##`/`###` section up to the next heading of any level."""
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
    assert match, f"no section {heading!r} in {DOC.name}"
    return match.group(1)


def _table_fields(section: str) -> set[str]:
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))


@pytest.mark.parametrize(
    ("heading", "model"),
    [
        ("Contract (top level)", Contract),
        ("`backend`", Backend),
        ("`backend.auth`", BackendAuth),
        ("Endpoint (`endpoints[]`)", Endpoint),
        ("`llm` block", LlmBlock),
        ("Example (`examples[]`)", LlmExample),
    ],
)
def test_every_model_field_is_documented(text: str, heading: str, model: type[BaseModel]) -> None:
    assert _table_fields(_section(text, heading)) == set(model.model_fields)


@pytest.mark.parametrize("enum", ENUMS, ids=lambda e: e.__name__)
def test_every_enum_value_is_documented(text: str, enum: type[Enum]) -> None:
    for member in enum:
        assert re.search(rf"\b{re.escape(str(member.value))}\b", text), f"{enum.__name__}.{member.name}"


def test_the_code_table_matches_the_validator(text: str) -> None:
    rules = pytest.importorskip("colonnade.contracts.rules")
    rows = re.findall(r"^\| (UAC\d{3}) \| (error|warning) \|", _section(text, "Validator codes"), re.M)
    assert rows == [(code, severity.value) for code, (severity, _) in rules.CODES.items()]


def _annotated_example(text: str) -> str:
    blocks = re.findall(r"^```yaml\n(.*?)^```$", _section(text, "Complete annotated example"), re.S | re.M)
    assert len(blocks) == 1
    return str(blocks[0])


def test_the_annotated_example_is_a_valid_contract(text: str) -> None:
    example = _annotated_example(text)
    contract = Contract.model_validate(yaml.safe_load(example))
    assert [op.canonical_name for op in contract.operations()] == [
        "acme:helpdesk:get_ticket",
        "acme:helpdesk:delete_ticket",
        "acme:helpdesk:health",
    ]
    validate = pytest.importorskip("colonnade.contracts.validate")
    findings = validate.validate_document(parse_text(example, "contract-reference.yaml"))
    assert [f"{f.code} {f.path}: {f.message}" for f in findings] == []


def test_the_documented_derived_schema_is_the_real_one(text: str) -> None:
    contract = Contract.model_validate(yaml.safe_load(_annotated_example(text)))
    derived = contract.endpoints[1].effective_input_schema()
    shown = re.search(r"^```json\n(.*?)^```$", _section(text, "Derived input schema"), re.S | re.M)
    assert shown is not None
    assert yaml.safe_load(shown.group(1)) == derived
