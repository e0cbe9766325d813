"""The LLM-ready verdict per endpoint (criteria R1-R7) and the V2 rule with grandfathered endpoints."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.contracts.findings import Severity
from colonnade.contracts.llm_ready import GRANDFATHERED, NOT_LLM_READY, llm_ready_findings, verdicts
from colonnade.contracts.model import ContractStatus
from colonnade.contracts.validate import parse_contract, validate_data

ROOT = Path(__file__).parents[2]
CRM = ROOT / "examples" / "contracts" / "crm.yaml"
VERSIONS = ROOT / "tests" / "fixtures" / "contracts" / "versions"


def _crm() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CRM.read_text(encoding="utf-8"))
    return data


def _judge(data: dict[str, Any]) -> dict[str, list[str]]:
    findings = validate_data(data)
    return {v.tool: [code for code, _ in v.failing] for v in verdicts(parse_contract(data), findings)}


def test_a_complete_endpoint_is_llm_ready() -> None:
    judged = _judge(_crm())
    assert judged["get_customer"] == []
    assert judged["update_customer"] == ["R4"]  # its body properties have no descriptions


@pytest.mark.parametrize(
    ("edit", "criterion"),
    [
        (lambda e: e["llm"].update(summary="Gets it. Done."), "R1"),
        (lambda e: e["llm"].update(intent="x"), "R2"),
        (lambda e: e.pop("output_schema"), "R5"),
        (lambda e: e["llm"].update(side_effects="write"), "R6"),
        (lambda e: e["llm"].update(examples=[]), "R7"),
    ],
)
def test_each_criterion_names_itself_when_it_fails(edit: Any, criterion: str) -> None:
    data = copy.deepcopy(_crm())
    endpoint = next(e for e in data["endpoints"] if e.get("llm", {}).get("tool_name") == "get_customer")
    edit(endpoint)
    assert criterion in _judge(data)["get_customer"]


def test_an_endpoint_without_an_llm_block_fails_the_agent_facing_criteria() -> None:
    data = copy.deepcopy(_crm())
    endpoint = next(e for e in data["endpoints"] if e.get("llm", {}).get("tool_name") == "get_customer")
    del endpoint["llm"]
    judged = _judge(data)
    assert {"R1", "R2", "R3", "R6"} <= set(judged[endpoint["operation_id"]])


def test_v2_makes_new_endpoints_errors_when_published_and_warnings_in_drafts() -> None:
    data = yaml.safe_load((VERSIONS / "orders-1.1.0.yaml").read_text(encoding="utf-8"))
    contract = parse_contract(data)
    legacy = {"get_order", "list_orders", "create_order", "cancel_order"}
    found = llm_ready_findings(contract, validate_data(data), legacy=legacy)
    [new, kept] = found
    assert new.code == NOT_LLM_READY and new.severity is Severity.ERROR
    assert "track_order" in new.message and "R5 typed output" in new.message
    assert kept.code == GRANDFATHERED and "cancel_order" in kept.message
    draft = contract.model_copy(update={"status": ContractStatus.DRAFT})
    assert next(f.severity for f in llm_ready_findings(draft, legacy=legacy)) is Severity.WARNING
    assert [f.code for f in llm_ready_findings(contract)] == [
        NOT_LLM_READY
    ] * 5  # without a baseline, all are new


def test_validate_reports_the_verdicts_and_v2_fails_the_run() -> None:
    env = {"COLUMNS": "200"}
    shown = CliRunner().invoke(app, ["contract", "validate", "--llm-ready", str(CRM)], env=env)
    assert shown.exit_code == 0, shown.output
    assert "5 of 6 MCP endpoints LLM-ready" in shown.stdout
    assert "update_customer  not LLM-ready  R4" in shown.stdout

    as_json = CliRunner().invoke(
        app, ["contract", "validate", "--llm-ready", "-f", "json", str(CRM)], env=env
    )
    [entry] = json.loads(as_json.stdout)["files"]
    assert {v["tool"]: v["llm_ready"] for v in entry["llm_ready"]}["get_customer"] is True

    old, new = str(VERSIONS / "orders-1.0.0.yaml"), str(VERSIONS / "orders-1.1.0.yaml")
    enforced = CliRunner().invoke(app, ["contract", "validate", "--v2", "--against", old, new], env=env)
    assert enforced.exit_code == 1
    assert NOT_LLM_READY in enforced.stdout and "track_order" in enforced.stdout
    assert GRANDFATHERED in enforced.stdout
    missing = CliRunner().invoke(
        app, ["contract", "validate", "--v2", "--against", "nope.yaml", new], env=env
    )
    assert missing.exit_code == 2 and "--against" in missing.output
