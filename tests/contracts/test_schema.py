"""The published contract schema: generated from the model, checked in, never drifting."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

from colonnade.contracts.uac_json_schema import (
    DIALECT,
    PUBLISHED_SCHEMA_PATH,
    SCHEMA_ID,
    contract_json_schema,
    schema_text,
    write_schema,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "contracts"


def test_checked_in_schema_matches_the_model() -> None:
    on_disk = PUBLISHED_SCHEMA_PATH.read_text(encoding="utf-8")
    assert on_disk == schema_text(), (
        f"{PUBLISHED_SCHEMA_PATH} is out of date with contracts/model.py: run `make schemas` and commit it"
    )


def test_schema_is_draft_2020_12_with_an_id_first() -> None:
    schema = contract_json_schema()
    assert list(schema)[:4] == ["$schema", "$id", "title", "description"]
    assert list(schema)[-1] == "$defs"
    assert (schema["$schema"], schema["$id"]) == (DIALECT, SCHEMA_ID)
    Draft202012Validator.check_schema(schema)


def test_generation_is_stable() -> None:
    assert json.dumps(contract_json_schema()) == json.dumps(contract_json_schema())


def test_returned_schema_is_a_copy() -> None:
    contract_json_schema()["properties"].clear()
    assert "endpoints" in contract_json_schema()["properties"]


def test_valid_fixture_passes_the_published_schema_directly() -> None:
    schema = json.loads(PUBLISHED_SCHEMA_PATH.read_text(encoding="utf-8"))
    document = yaml.safe_load((FIXTURES / "valid.yaml").read_text(encoding="utf-8"))
    assert list(Draft202012Validator(schema).iter_errors(document)) == []
    document["status"] = "live"
    assert [e.validator for e in Draft202012Validator(schema).iter_errors(document)] == ["enum"]


def test_write_schema_creates_parents(tmp_path: Path) -> None:
    written = write_schema(tmp_path / "a" / "b" / "uac.schema.json")
    assert written.read_text(encoding="utf-8") == schema_text()
    assert schema_text().endswith("}\n")
