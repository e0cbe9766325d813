"""Run the smoke: connect with the real MCP client, list tools, prove each contract operation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import jsonschema
import mcp_types as types
from mcp import Client

from colonnade.calls.envelope import DRY_RUN_META_KEY
from colonnade.contracts.load import ContractLoadError, load_document
from colonnade.contracts.model import Contract, LlmExample, Operation, SideEffects
from colonnade.contracts.validate import validate_document
from colonnade.smoke.checks import (
    Verdict,
    check_annotations,
    check_description,
    check_example_inputs,
    check_example_result,
    check_meta,
    check_output_schema,
    check_wire_name,
    result_text,
    side_effects_of,
)
from colonnade.smoke.connect import Mode, connect
from colonnade.smoke.report import CheckStatus, SmokeReport

__all__ = ["run_smoke"]

APPROVAL_CODE = "P-PRECOND-APPROVAL-REQUIRED"


async def run_smoke(
    url: str, contract_paths: Sequence[Path], *, mode: Mode = "auto", token: str | None = None
) -> SmokeReport:
    report = SmokeReport(url)
    async with connect(url, token=token, mode=mode) as client:
        listed = await _all_tools(client)
        by_canonical = {str((t.meta or {}).get("colonnade/canonical_name")): t for t in listed}
        for path in contract_paths:
            contract = _load(path, report)
            if contract is None:
                continue
            for op in contract.operations():
                if op.endpoint.mcp:
                    await _smoke_operation(client, report, str(path), op, by_canonical.get(op.canonical_name))
    return report


async def _all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _load(path: Path, report: SmokeReport) -> Contract | None:
    """Check 1: the contract validates. A file that does not parse yields one failing row."""
    source = str(path)
    try:
        doc = load_document(path)
    except ContractLoadError as exc:
        report.add(source, "-", "contract validates", CheckStatus.FAIL, str(exc))
        return None
    findings = validate_document(doc)
    errors = [f for f in findings if f.is_error]
    try:
        contract = Contract.model_validate(doc.data)
    except ValueError:
        detail = "; ".join(f"{f.code} {f.path}: {f.message}" for f in errors[:3])
        report.add(source, "-", "contract validates", CheckStatus.FAIL, detail or "not a contract")
        return None
    for op in contract.operations():
        if not op.endpoint.mcp:
            continue
        mine = [f for f in errors if f.path == op.pointer or f.path.startswith(op.pointer + "/")]
        if errors:
            detail = "; ".join(f"{f.code} {f.path}: {f.message}" for f in (mine or errors)[:3])
            report.add(source, op.canonical_name, "contract validates", CheckStatus.FAIL, detail)
        else:
            warnings = len(findings)
            report.add(
                source,
                op.canonical_name,
                "contract validates",
                CheckStatus.PASS,
                f"no errors ({warnings} warning(s))",
            )
    return contract


async def _smoke_operation(
    client: Client, report: SmokeReport, source: str, op: Operation, tool: types.Tool | None
) -> None:
    name = op.canonical_name
    if tool is None:
        report.add(
            source,
            name,
            "listed in tools/list",
            CheckStatus.FAIL,
            "no listed tool carries _meta colonnade/canonical_name = " + name,
        )
        return
    report.add(source, name, "listed in tools/list", *check_wire_name(tool, op))
    llm = op.endpoint.llm
    for check, verdict in (
        ("description has summary+intent", check_description(tool, llm)),
        ("annotations match side_effects", check_annotations(tool, op)),
        ("output schema is an object", check_output_schema(tool)),
        ("examples validate", check_example_inputs(tool, llm)),
    ):
        report.add(source, name, check, *verdict)
    await _run_examples(client, report, source, op, tool)
    await _check_gating(client, report, source, op, tool)


async def _run_examples(
    client: Client, report: SmokeReport, source: str, op: Operation, tool: types.Tool
) -> None:
    """Check 6 runs none/read examples; check 7 never executes write/destructive ones."""
    llm = op.endpoint.llm
    name = op.canonical_name
    if llm is None or not llm.examples:
        report.add(source, name, "examples run", CheckStatus.SKIP, "no examples")
        return
    effects = side_effects_of(op)
    if effects in (SideEffects.WRITE, SideEffects.DESTRUCTIVE):
        report.add(
            source,
            name,
            "examples run",
            CheckStatus.SKIP,
            f"not executed: side_effects={effects.value} (smoke never changes data)",
        )
        return
    for i, example in enumerate(llm.examples):
        report.add(source, name, f"example {i} runs", *await _run_example(client, tool, example))


async def _run_example(client: Client, tool: types.Tool, example: LlmExample) -> Verdict:
    """Call the tool as a client would (which checks the result against the output schema)."""
    try:
        result = await client.call_tool(tool.name, example.input)
    except Exception as exc:  # the client refused the result: an agent's client would too
        return CheckStatus.FAIL, f"the MCP client rejected the result: {exc}"
    if result.is_error:
        return CheckStatus.FAIL, f"tool error: {result_text(result)[:200]}"
    return check_example_result(result, example)


async def _check_gating(
    client: Client, report: SmokeReport, source: str, op: Operation, tool: types.Tool
) -> None:
    """Check 8: typed _meta tells the truth; a gated tool refuses a probe with an approval demand.

    The probe is a dry run with arguments the schema rejects, so nothing can execute even on a
    gateway that does not gate (it would answer I-REQ-SCHEMA, and the check fails).
    """
    name = op.canonical_name
    report.add(source, name, "typed _meta", *check_meta(tool, op))
    llm = op.endpoint.llm
    gated = side_effects_of(op) is SideEffects.DESTRUCTIVE or (
        llm is not None and llm.requires_human_approval
    )
    if not gated:
        return
    probe = _unexecutable_input(tool.input_schema)
    if probe is None:
        report.add(
            source,
            name,
            "gated: needs approval",
            CheckStatus.SKIP,
            "cannot build an input the schema rejects, so no probe is sent (it might execute)",
        )
        return
    result = await client.call_tool(tool.name, probe, meta=_dry_run_meta())
    meta = dict(result.meta or {})
    code = (meta.get("colonnade/result") or {}).get("error", {}).get("code")
    if result.is_error and code == APPROVAL_CODE:
        report.add(source, name, "gated: needs approval", CheckStatus.PASS, f"dry-run probe answered {code}")
    else:
        detail = json.dumps(meta.get("colonnade/result"))[:160] if meta else result_text(result)[:160]
        report.add(
            source,
            name,
            "gated: needs approval",
            CheckStatus.FAIL,
            f"dry-run probe was not refused with {APPROVAL_CODE}: {detail}",
        )


def _unexecutable_input(schema: dict[str, Any]) -> dict[str, Any] | None:
    """Arguments the tool's own schema rejects: even a gateway that did not gate could not run them."""
    validator = jsonschema.Draft202012Validator(schema)
    for candidate in ({}, {"__colonnade_smoke_probe__": True}):
        if not validator.is_valid(candidate):
            return candidate
    return None


def _dry_run_meta() -> types.RequestParamsMeta:
    meta: dict[str, Any] = {DRY_RUN_META_KEY: True}
    return cast(types.RequestParamsMeta, meta)
