"""The smoke's oracle: each check passes on the gateway's own projection and fails on a lie."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from colonnade.catalog.projection import project_contract
from colonnade.contracts.model import Contract, Operation
from colonnade.contracts.validate import load_contract
from colonnade.smoke.checks import (
    check_annotations,
    check_description,
    check_example_inputs,
    check_meta,
    check_output_schema,
    check_wire_name,
)
from colonnade.smoke.report import CheckStatus, SmokeReport

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def billing() -> Contract:
    return load_contract(ROOT / "examples" / "contracts" / "billing.yaml")


def _listed(contract: Contract) -> dict[str, tuple[Operation, types.Tool]]:
    tools = {t.canonical_name: t.to_mcp() for t in project_contract(contract)}
    return {
        op.canonical_name: (op, tools[op.canonical_name]) for op in contract.operations() if op.endpoint.mcp
    }


def test_every_check_passes_on_the_real_projection(billing: Contract) -> None:
    for op, tool in _listed(billing).values():
        assert check_wire_name(tool, op)[0] is CheckStatus.PASS
        assert check_annotations(tool, op)[0] is CheckStatus.PASS
        assert check_description(tool, op.endpoint.llm)[0] is CheckStatus.PASS
        assert check_meta(tool, op)[0] is CheckStatus.PASS
        assert check_example_inputs(tool, op.endpoint.llm)[0] in (CheckStatus.PASS, CheckStatus.SKIP)


def test_each_check_fails_on_a_lie(billing: Contract) -> None:
    op, tool = _listed(billing)["acme:billing:void_invoice"]
    renamed = tool.model_copy(update={"name": "void_invoice"})
    assert check_wire_name(renamed, op)[0] is CheckStatus.FAIL
    harmless = tool.model_copy(update={"annotations": types.ToolAnnotations(read_only_hint=True)})
    status, reason = check_annotations(harmless, op)
    assert status is CheckStatus.FAIL and "destructive" in reason
    vague = tool.model_copy(update={"description": "Voids things."})
    assert check_description(vague, op.endpoint.llm)[0] is CheckStatus.FAIL
    ungated = tool.model_copy(
        update={"meta": {**(tool.meta or {}), "colonnade/requires_human_approval": False}}
    )
    assert check_meta(ungated, op)[0] is CheckStatus.FAIL
    strict = tool.model_copy(update={"input_schema": {"type": "object", "required": ["nothing_like_it"]}})
    assert check_example_inputs(strict, op.endpoint.llm)[0] is CheckStatus.FAIL


def test_report_counts_and_junit(tmp_path: Path) -> None:
    report = SmokeReport("http://127.0.0.1:9/mcp")
    report.add("a.yaml", "t:a:x", "listed", CheckStatus.PASS)
    report.add("a.yaml", "t:a:x", "examples run", CheckStatus.SKIP, "not executed")
    assert report.ok
    report.add("a.yaml", "t:a:y", "listed", CheckStatus.FAIL, "missing")
    assert not report.ok
    out = tmp_path / "junit.xml"
    report.write_junit(out)
    xml = out.read_text()
    assert 'failures="1"' in xml and 'skipped="1"' in xml and "<failure" in xml


def test_a_non_object_output_schema_is_caught_before_a_client_chokes_on_it(billing: Contract) -> None:
    _, tool = _listed(billing)["acme:billing:list_invoices"]
    assert check_output_schema(tool) == (CheckStatus.PASS, "object root")
    bare = tool.model_copy(update={"output_schema": {"type": "array", "items": {"type": "string"}}})
    status, reason = check_output_schema(bare)
    assert status is CheckStatus.FAIL and "2025-11-25 clients refuse the whole tools/list" in reason
