"""Compatibility between contract versions: each change class, the bump it needs, the finding it makes.

The versions are real files (`tests/fixtures/contracts/versions/`); each breaking class is also
made from the first version by one edit, refused under a minor bump and allowed under a major one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from colonnade.contracts.compatibility import (
    BREAKING_ALLOWED,
    BREAKING_WITHOUT_MAJOR,
    UNDERSTATED_BUMP,
    ChangeClass,
    baseline_for,
    compatibility_findings,
    diff_contracts,
)
from colonnade.contracts.model import Contract, ContractStatus
from colonnade.contracts.validate import load_contract, parse_contract

VERSIONS = Path(__file__).parent.parent / "fixtures" / "contracts" / "versions"


def _version(name: str) -> Contract:
    return load_contract(VERSIONS / f"orders-{name}.yaml")


def _base() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((VERSIONS / "orders-1.0.0.yaml").read_text(encoding="utf-8"))
    return data


def _edited(edit: Callable[[dict[str, Any]], None], version: str) -> Contract:
    data = copy.deepcopy(_base())
    edit(data)
    data["version"] = version
    return parse_contract(data)


def _endpoint(data: dict[str, Any], tool: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e for e in data["endpoints"] if e["llm"]["tool_name"] == tool)
    return found


def _set(tool: str, *keys: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target = _endpoint(data, tool)
        for key in keys[:-1]:
            target = target.setdefault(key, {})
        target[keys[-1]] = value

    return edit


def _drop(tool: str, *keys: str) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        target = _endpoint(data, tool)
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return edit


def _remove_tool(data: dict[str, Any]) -> None:
    data["endpoints"] = [e for e in data["endpoints"] if e["llm"]["tool_name"] != "cancel_order"]


def _required_list(tool: str, names: list[str]) -> Callable[[dict[str, Any]], None]:
    return _set(tool, "input_schema", "required", value=names)


def _new_required(data: dict[str, Any]) -> None:
    endpoint = _endpoint(data, "create_order")
    schema = endpoint["input_schema"]
    schema["properties"]["currency"] = {"type": "string"}
    schema["required"] = [*schema["required"], "currency"]
    endpoint["llm"]["examples"][0]["input"]["currency"] = "EUR"


def _sku_format(data: dict[str, Any]) -> None:
    endpoint = _endpoint(data, "create_order")
    endpoint["input_schema"]["properties"]["sku"]["format"] = "uuid"
    endpoint["llm"]["examples"][0]["input"]["sku"] = "6f1c0e1e-8f0b-4c5e-9a43-2b7d9b0f4e11"


def _restrict_agents(data: dict[str, Any]) -> None:
    _endpoint(data, "create_order")["llm"]["safe_for_agents"] = False


def _raise_classification(data: dict[str, Any]) -> None:
    data["classification"] = "restricted"


def _drop_output_field(data: dict[str, Any]) -> None:
    schema = _endpoint(data, "get_order")["output_schema"]
    del schema["properties"]["total"]
    schema["required"] = ["order_id", "status"]


BREAKING: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "tool removed": (_remove_tool, "tool-removed"),
    "tool renamed": (_set("list_orders", "llm", "tool_name", value="search_orders"), "tool-renamed"),
    "new required input": (_new_required, "input-required-added"),
    "existing input made required": (_required_list("list_orders", ["status"]), "input-required-added"),
    "narrowed type": (
        _set("list_orders", "input_schema", "properties", "limit", value={"type": "string", "x-in": "query"}),
        "input-narrowed",
    ),
    "narrowed enum": (
        _set("list_orders", "input_schema", "properties", "status", "enum", value=["open", "shipped"]),
        "input-narrowed",
    ),
    "format added": (_sku_format, "input-narrowed"),
    "tighter bound": (
        _set("list_orders", "input_schema", "properties", "limit", "maximum", value=50),
        "input-narrowed",
    ),
    "input property removed": (
        _drop("list_orders", "input_schema", "properties", "limit"),
        "input-property-removed",
    ),
    "output field removed": (_drop_output_field, "output-field-removed"),
    "output field retyped": (
        _set("get_order", "output_schema", "properties", "total", value={"type": "string"}),
        "output-retyped",
    ),
    "output enum widened": (
        _set(
            "get_order",
            "output_schema",
            "properties",
            "status",
            "enum",
            value=["open", "shipped", "cancelled", "lost"],
        ),
        "output-retyped",
    ),
    "side effects raised": (
        _set("get_order", "llm", "side_effects", value="write"),
        "side-effects-raised",
    ),
    "approval dropped": (
        _set("cancel_order", "llm", "requires_human_approval", value=False),
        "approval-dropped",
    ),
    "agents shut out": (_restrict_agents, "access-tightened"),
    "classification raised": (_raise_classification, "access-tightened"),
}


@pytest.mark.parametrize("case", sorted(BREAKING))
def test_each_breaking_change_is_refused_under_a_minor_bump_and_allowed_under_a_major(case: str) -> None:
    edit, kind = BREAKING[case]
    old = _version("1.0.0")
    minor = diff_contracts(old, _edited(edit, "1.1.0"))
    assert kind in [c.kind for c in minor.breaking], minor.changes
    assert minor.required_bump == "major"
    assert not minor.bump_suffices
    findings = compatibility_findings(minor)
    assert [f.code for f in findings] == [BREAKING_WITHOUT_MAJOR]
    assert findings[0].is_error
    assert kind in findings[0].message
    assert "2.0.0" in findings[0].fix and "--allow-breaking" in findings[0].fix

    major = diff_contracts(old, _edited(edit, "2.0.0"))
    assert kind in [c.kind for c in major.breaking]
    assert major.bump_suffices
    assert compatibility_findings(major) == []


def test_an_override_turns_the_refusal_into_a_warning() -> None:
    diff = diff_contracts(_version("1.1.0"), _version("1.2.0"))
    [finding] = compatibility_findings(diff, allow_breaking=True)
    assert finding.code == BREAKING_ALLOWED
    assert not finding.is_error


def test_the_fixture_sequence_is_classified_as_its_files_say() -> None:
    additive = diff_contracts(_version("1.0.0"), _version("1.1.0"))
    assert {c.kind for c in additive.of(ChangeClass.ADDITIVE)} == {"tool-added", "input-optional-added"}
    assert [c.kind for c in additive.of(ChangeClass.DOCUMENTATION)] == ["documentation"]
    assert additive.breaking == []
    assert additive.required_bump == "minor" and additive.bump_suffices

    breaking = diff_contracts(_version("1.1.0"), _version("1.2.0"))
    assert {(c.kind, c.tool) for c in breaking.breaking} == {
        ("tool-removed", "cancel_order"),
        ("tool-renamed", "list_orders"),
    }
    assert not breaking.bump_suffices
    assert breaking.suggested_version == "2.0.0"

    major = diff_contracts(_version("1.1.0"), _version("2.0.0"))
    assert len(major.breaking) == 2 and major.bump_suffices


@pytest.mark.parametrize(
    ("edit", "kind"),
    [
        (_set("create_order", "input_schema", "properties", "quantity", "minimum", value=0), "input-widened"),
        (
            _set(
                "list_orders",
                "input_schema",
                "properties",
                "status",
                "enum",
                value=["open", "shipped", "cancelled", "held"],
            ),
            "input-widened",
        ),
        (_required_list("create_order", ["sku"]), "input-widened"),
        (_set("cancel_order", "llm", "side_effects", value="read"), "side-effects-lowered"),
    ],
)
def test_widening_an_input_is_additive(edit: Callable[[dict[str, Any]], None], kind: str) -> None:
    diff = diff_contracts(_version("1.0.0"), _edited(edit, "1.1.0"))
    assert kind in [c.kind for c in diff.of(ChangeClass.ADDITIVE)], diff.changes
    assert diff.breaking == []
    assert diff.bump_suffices


def test_documentation_only_needs_a_patch_and_additive_under_a_patch_warns() -> None:
    text = diff_contracts(
        _version("1.0.0"), _edited(_set("get_order", "llm", "intent", value="Read it."), "1.0.1")
    )
    assert [c.change_class for c in text.changes] == [ChangeClass.DOCUMENTATION]
    assert text.required_bump == "patch" and compatibility_findings(text) == []

    added = diff_contracts(_version("1.0.0"), _version("1.1.0").model_copy(update={"version": "1.0.1"}))
    [finding] = compatibility_findings(added)
    assert finding.code == UNDERSTATED_BUMP and not finding.is_error
    assert "1.1.0" in finding.fix


def test_an_unproven_schema_change_counts_as_breaking() -> None:
    edit = _set(
        "create_order",
        "input_schema",
        "properties",
        "sku",
        value={"oneOf": [{"type": "string"}, {"type": "integer"}]},
    )
    diff = diff_contracts(_version("1.0.0"), _edited(edit, "1.1.0"))
    assert any(c.kind == "input-changed" or c.kind == "input-narrowed" for c in diff.breaking), diff.changes


def test_no_change_needs_no_bump() -> None:
    same = diff_contracts(_version("1.0.0"), _version("1.0.0"))
    assert same.changes == () and same.required_bump == "none" and same.bump_suffices


def test_below_1_0_a_minor_bump_counts_as_major() -> None:
    old = _version("1.0.0").model_copy(update={"version": "0.3.0"})
    new = _version("1.2.0").model_copy(update={"version": "0.4.0"})
    assert diff_contracts(old, new).bump_suffices
    assert not diff_contracts(old, new.model_copy(update={"version": "0.3.1"})).bump_suffices


def test_the_baseline_is_the_highest_published_version_below_the_new_one() -> None:
    stored = [_version("1.0.0"), _version("1.1.0"), _version("2.0.0")]
    draft = _version("1.1.0").model_copy(update={"version": "1.1.5", "status": ContractStatus.DRAFT})
    backport = _version("1.1.0").model_copy(update={"version": "1.2.0"})
    found = baseline_for(backport, [*stored, draft])
    assert found is not None and found.version == "1.1.0"
    assert baseline_for(_version("1.0.0"), stored) is None


def test_examples_of_the_previous_version_must_still_be_valid_calls() -> None:
    """N/N-1: a narrowed pattern that the old example no longer matches is named by that example."""
    edit = _set(
        "get_order", "input_schema", "properties", "order_id", value={"type": "string", "pattern": "^ORD-"}
    )

    def narrowed(data: dict[str, Any]) -> None:
        edit(data)
        _endpoint(data, "get_order")["llm"]["examples"][0]["input"]["order_id"] = "ORD-1"

    diff = diff_contracts(_version("1.0.0"), _edited(narrowed, "1.1.0"))
    [rejected] = [c for c in diff.breaking if c.kind == "example-rejected"]
    assert rejected.tool == "get_order" and rejected.path == "/endpoints/0/llm/examples/0"
    assert "1.0.0" in rejected.message and "order_id" in rejected.message
    assert not [
        c
        for c in diff_contracts(_version("1.0.0"), _version("1.1.0")).changes
        if c.kind == "example-rejected"
    ]
