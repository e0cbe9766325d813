"""Capability cards: the vault's exported cards are complete and valid, and every rule catches its mistake."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from colonnade.organs.card import OrganCard
from colonnade.organs.card_files import write_cards
from colonnade.organs.card_loading import check_folder, load_card
from colonnade.organs.card_rules import CODES, validate_card_data
from colonnade.organs.organ_errors import OrganCardError, OrganCardsInvalid
from examples.organs.vault import organ as vault
from tests.support.repo import ROOT

COLONNADE = Path(sys.executable).with_name("colonnade")
VAULT_CARDS = ROOT / "examples" / "organs" / "vault" / "cards"


def _vault_data() -> dict[str, Any]:
    return json.loads((VAULT_CARDS / "organ.json").read_text(encoding="utf-8"))


def _codes(data: Any) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in validate_card_data(data)]


def test_the_shipped_vault_cards_are_complete_and_match_the_code() -> None:
    data = _vault_data()
    assert tomllib.loads((VAULT_CARDS / "organ.toml").read_text(encoding="utf-8")) == data
    assert OrganCard.model_validate(data) == vault.describe()  # re-export when this fails
    assert check_folder(VAULT_CARDS) == []
    card = load_card(VAULT_CARDS)
    assert list(card.operations()) == ["store", "retrieve", "delete", "similarity.search"]
    assert card.entrypoint == "examples.organs.vault:organ"
    assert 3 <= len(card.tags) <= 8
    for op, function in card.operations().items():
        assert function.description.strip(), op
        assert 2 <= len(function.tags) <= 5 and 2 <= len(function.examples) <= 4, op
        jsonschema.Draft202012Validator.check_schema(function.input_schema)
        assert function.output_schema is not None
        jsonschema.Draft202012Validator.check_schema(function.output_schema)
        for example in function.examples:
            jsonschema.validate(example.input, function.input_schema)
    assert card.operations()["delete"].side_effects == ["delete"]


def test_schemas_come_from_type_hints() -> None:
    store = vault.describe().operations()["store"]
    schema = store.input_schema
    assert schema["required"] == ["key", "content"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["encoding"] == {
        "default": "utf-8",
        "description": "How `content` is written.",
        "enum": ["utf-8", "base64"],
        "title": "Encoding",
        "type": "string",
    }
    assert "context" not in schema["properties"]  # injected by the runtime, not asked of callers
    assert store.output_schema is not None and set(store.output_schema["required"]) >= {"key", "sha256"}


def _broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(_vault_data())
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(tags=["storage", "blobs"]), ("ORG003", "/tags")),
        (lambda d: d.update(tags=["Storage", "blobs", "sqlite"]), ("ORG004", "/tags/0")),
        (lambda d: d["functions"][0].update(tags=["blobs"]), ("ORG005", "/functions/0/tags")),
        (
            lambda d: d["functions"][1].update(tags=["a", "b", "c", "d", "e", "f"]),
            ("ORG005", "/functions/1/tags"),
        ),
        (lambda d: d["functions"][1]["tags"].append("Read_Only"), ("ORG004", "/functions/1/tags/2")),
        (lambda d: d["functions"][0]["examples"].pop(), ("ORG006", "/functions/0/examples")),
        (lambda d: d.update(description="  "), ("ORG007", "/description")),
        (lambda d: d["functions"][2].pop("description"), ("ORG007", "/functions/2/description")),
        (
            lambda d: d["sub_organs"][0]["functions"][0].pop("idempotent"),
            ("ORG008", "/sub_organs/0/functions/0/idempotent"),
        ),
        (lambda d: d["functions"][0].pop("side_effects"), ("ORG009", "/functions/0/side_effects")),
        (
            lambda d: d["functions"][0].update(side_effects=["mutate"]),
            ("ORG009", "/functions/0/side_effects/0"),
        ),
        (
            lambda d: d["functions"][1]["input_schema"].update(type="objekt"),
            ("ORG010", "/functions/1/input_schema"),
        ),
        (
            lambda d: d["functions"][1].update(input_schema={"type": "string"}),
            ("ORG010", "/functions/1/input_schema"),
        ),
        (
            lambda d: d["functions"][1].update(output_schema={"$ref": "#/$defs/Nowhere"}),
            ("ORG010", "/functions/1/output_schema"),
        ),
        (
            lambda d: d["functions"][1]["examples"][0].update(input={"key": 7}),
            ("ORG011", "/functions/1/examples/0/input"),
        ),
        (lambda d: d["functions"].append(copy.deepcopy(d["functions"][0])), ("ORG013", "/functions/3/name")),
        (lambda d: d.pop("entrypoint"), ("ORG014", "/entrypoint")),
        (
            lambda d: d["functions"][1]["side_effects"].append("network"),
            ("ORG015", "/functions/1/side_effects"),
        ),
        (lambda d: d.update(functions=[], sub_organs=[]), ("ORG016", "/functions")),
        (lambda d: d.update(version="one"), ("ORG002", "/version")),
        (lambda d: d.update(colour="blue"), ("ORG002", "/colour")),
        (lambda d: d["functions"][0]["slo"].update(queue_cap=0), ("ORG002", "/functions/0/slo/queue_cap")),
    ],
)
def test_each_rule_names_what_where_and_how_to_fix(change: Any, expected: tuple[str, str]) -> None:
    found = validate_card_data(_broken(change))
    assert expected in [(f.code, f.path) for f in found]
    finding = next(f for f in found if (f.code, f.path) == expected)
    assert finding.severity is CODES[finding.code][0]
    assert finding.message and finding.fix


def test_a_valid_card_has_no_findings_and_a_broken_one_gets_all_at_once() -> None:
    assert _codes(_vault_data()) == []
    data = _broken(
        lambda d: (d.update(tags=["x"]), d["functions"][0].pop("idempotent"), d.pop("description"))
    )
    assert {code for code, _ in _codes(data)} == {"ORG003", "ORG007", "ORG008"}
    assert _codes(["not", "a", "card"]) == [("ORG002", "")]


def test_load_card_refuses_an_invalid_card_with_every_finding(tmp_path: Path) -> None:
    data = _broken(lambda d: (d.update(tags=["x"]), d["functions"][0].pop("idempotent")))
    (tmp_path / "organ.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(OrganCardsInvalid) as caught:
        load_card(tmp_path)
    assert {f.code for f in caught.value.findings if f.is_error} == {"ORG003", "ORG008"}
    assert "ORG008 /functions/0/idempotent" in str(caught.value)


def test_json_and_toml_that_differ_are_reported_where(tmp_path: Path) -> None:
    write_cards(vault.describe(), tmp_path)
    toml = (
        (tmp_path / "organ.toml")
        .read_text(encoding="utf-8")
        .replace('subsystem = "blobs"', 'subsystem = "files"')
    )
    (tmp_path / "organ.toml").write_text(toml, encoding="utf-8")
    assert [(f.code, f.path) for f in check_folder(tmp_path)] == [("ORG012", "/subsystem")]
    (tmp_path / "organ.toml").unlink()
    assert [f.code for f in check_folder(tmp_path)] == ["ORG012"]
    (tmp_path / "organ.json").write_text("{not json", encoding="utf-8")
    assert next(f.code for f in check_folder(tmp_path)) == "ORG001"


def test_a_card_holding_a_null_cannot_go_to_toml(tmp_path: Path) -> None:
    card = vault.describe()
    function = card.functions[0].model_copy(update={"input_schema": {"type": "object", "const": None}})
    with pytest.raises(OrganCardError, match=r"null at /functions/0/input_schema/const"):
        write_cards(card.model_copy(update={"functions": [function]}), tmp_path)


def _colonnade(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COLONNADE), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_cards_export_then_validate_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "cards"
    run = _colonnade("cards", "export", "examples.organs.vault", "-o", str(out), cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert f"wrote {out / 'organ.json'}" in run.stderr
    assert json.loads((out / "organ.json").read_text(encoding="utf-8")) == _vault_data()
    check = _colonnade("cards", "validate", str(tmp_path), "--format", "json", cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    assert json.loads(check.stdout) == {
        "files": [{"path": str(out), "findings": []}],
        "errors": 0,
        "warnings": 0,
    }


def test_cards_validate_reports_findings_and_exit_codes(tmp_path: Path) -> None:
    data = _broken(lambda d: d["functions"][0]["examples"].pop())
    (tmp_path / "organ.json").write_text(json.dumps(data), encoding="utf-8")
    run = _colonnade("cards", "validate", str(tmp_path), cwd=tmp_path)
    assert run.returncode == 1
    assert (
        "ORG006  error  /functions/0/examples  function 'store' has 1 example(s); 2-4 are expected"
        in run.stdout
    )
    assert "ORG012" in run.stdout  # organ.toml is missing
    empty = _colonnade("cards", "validate", str(tmp_path / "nothing"), cwd=tmp_path)
    assert empty.returncode == 2 and "not a folder of organ cards" in empty.stderr


def test_cards_export_of_a_module_without_an_organ_says_so(tmp_path: Path) -> None:
    run = _colonnade("cards", "export", "json", "-o", str(tmp_path / "x"), cwd=ROOT)
    assert run.returncode == 2
    assert "module 'json' has no attribute 'organ' and 0 organ objects" in run.stderr
    missing = _colonnade("cards", "export", "no_such_module_here", "-o", str(tmp_path / "x"), cwd=ROOT)
    assert "cannot import the organ module 'no_such_module_here'" in missing.stderr
