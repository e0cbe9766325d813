"""The validator never crashes: arbitrary YAML-shaped data gets findings, never an exception."""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colonnade.contracts.findings import Finding
from colonnade.contracts.model import Contract
from colonnade.contracts.rules import CODES
from colonnade.contracts.validate import ContractInvalid, parse_contract, validate_data

BASE: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "fixtures" / "contracts" / "valid.yaml").read_text(
        encoding="utf-8"
    )
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# What yaml.safe_load can produce: JSON values plus non-string keys, dates, bytes, sets and tuples.
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(
        ["GET", "DELETE", "destructive", "published", "/x/{id}", "{id}", "object", "x-in", "path"]
    )
    | st.dates()
    | st.binary(max_size=4)
)
keys = (
    st.text(max_size=12)
    | st.integers()
    | st.booleans()
    | st.none()
    | st.sampled_from(
        [
            "llm",
            "examples",
            "input",
            "input_schema",
            "properties",
            "type",
            "x-in",
            "methods",
            "path",
            "endpoints",
        ]
    )
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=4)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers(), max_size=3)
    ),
    max_leaves=25,
)


# JSON-Schema-looking dictionaries, for the rules that read input schemas and validate examples.
schema_keys = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "pattern",
        "enum",
        "items",
        "$ref",
        "minimum",
        "format",
        "x-in",
        "x-name",
        "additionalProperties",
        "anyOf",
        "$defs",
        "const",
        "maxLength",
        "$dynamicRef",
        "$id",
        "patternProperties",
    ]
)
schema_values = st.recursive(
    scalars
    | st.sampled_from(
        ["string", "object", "#/$defs/a", "#", "email", "date-time", "(", "^a+$", "query", "raw-body"]
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(schema_keys | st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=25,
)
schemas = st.dictionaries(schema_keys, schema_values, max_size=6)
example_inputs = st.dictionaries(st.sampled_from(["ticket_id", "verbose", "x"]), values, max_size=3)


def _pointers(value: Any, tokens: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [tokens]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _pointers(item, (*tokens, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _pointers(item, (*tokens, index))
    return out


LOCATIONS = [p for p in _pointers(BASE) if p]


def _replaced(location: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    target: Any = doc
    for token in location[:-1]:
        target = target[token]
    target[location[-1]] = value
    return doc


def _well_formed(findings: list[Finding]) -> None:
    for finding in findings:
        assert finding.code in CODES
        assert finding.severity is CODES[finding.code][0]
        assert finding.path == "" or finding.path.startswith("/")
        assert finding.message and finding.fix


@FUZZ
@given(values)
def test_arbitrary_data_never_raises(data: Any) -> None:
    _well_formed(validate_data(data))


@FUZZ
@given(st.sampled_from(LOCATIONS), values)
def test_any_part_of_a_valid_contract_replaced_by_anything(location: tuple[Any, ...], value: Any) -> None:
    _well_formed(validate_data(_replaced(location, value)))


@FUZZ
@given(st.sampled_from(LOCATIONS), values)
def test_no_error_findings_means_the_model_accepts_it(location: tuple[Any, ...], value: Any) -> None:
    doc = _replaced(location, value)
    findings = validate_data(doc)
    if any(f.is_error for f in findings):
        try:
            parse_contract(doc)
        except ContractInvalid as exc:
            assert exc.errors
        else:
            raise AssertionError("parse_contract accepted a document with errors")
    else:
        assert isinstance(parse_contract(doc), Contract)


@FUZZ
@given(schemas, schemas, example_inputs)
def test_odd_input_schemas_and_examples(schema: dict[Any, Any], prop: dict[Any, Any], example: Any) -> None:
    first = copy.deepcopy(BASE)
    first["endpoints"][0]["input_schema"] = schema
    first["endpoints"][0]["llm"]["examples"][0]["input"] = example
    _well_formed(validate_data(first))
    second = copy.deepcopy(BASE)
    second["endpoints"][0]["input_schema"]["properties"]["ticket_id"] = prop
    second["endpoints"][0]["llm"]["examples"][0]["input"] = example
    _well_formed(validate_data(second))


def test_yaml_specific_values_in_a_contract() -> None:
    doc = copy.deepcopy(BASE)
    doc["description"] = b"\x00\x01"
    doc["display_name"] = datetime.date(2024, 1, 1)
    doc["endpoints"][0]["tags"] = frozenset({"b", "a"})
    findings = validate_data(doc)
    assert [(f.code, f.path) for f in findings] == [("UAC001", "/description")]
    assert "bytes value, which JSON cannot hold" in findings[0].message


def test_a_schema_that_is_its_own_reference_is_a_finding_not_a_crash() -> None:
    """Found by the property test above: `{"$ref": ""}` sends a validator round in circles."""
    doc = copy.deepcopy(BASE)
    doc["endpoints"][0]["input_schema"] = {"$ref": ""}
    doc["endpoints"][0]["llm"]["examples"][0]["input"] = {}
    findings = validate_data(doc)
    assert any(f.code == "UAC001" and "refers to itself" in f.message for f in findings), findings
