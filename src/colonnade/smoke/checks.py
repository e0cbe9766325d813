"""The per-operation smoke checks, judged from the contract alone (an oracle independent of projection)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import mcp_types as types

from colonnade.catalog.naming import WireNames
from colonnade.contracts.example_match import mismatch
from colonnade.contracts.model import LlmBlock, LlmExample, Operation, SideEffects
from colonnade.smoke.report import CheckStatus

__all__ = [
    "Verdict",
    "check_annotations",
    "check_description",
    "check_example_inputs",
    "check_example_result",
    "check_meta",
    "check_output_schema",
    "check_wire_name",
    "result_output",
    "result_text",
]

Verdict = tuple[CheckStatus, str]

# The projection rules of the MCP surface issue, restated as the smoke's expectation.
_EXPECTED: dict[SideEffects, dict[str, bool]] = {
    SideEffects.NONE: {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False},
    SideEffects.READ: {"read_only_hint": True, "destructive_hint": False, "open_world_hint": True},
    SideEffects.WRITE: {"read_only_hint": False, "destructive_hint": False},
    SideEffects.DESTRUCTIVE: {"read_only_hint": False, "destructive_hint": True},
}
_METHOD_FALLBACK = {
    "GET": SideEffects.READ,
    "HEAD": SideEffects.READ,
    "OPTIONS": SideEffects.READ,
    "DELETE": SideEffects.DESTRUCTIVE,
}


def side_effects_of(op: Operation) -> SideEffects:
    llm = op.endpoint.llm
    if llm is not None:
        return llm.side_effects
    return _METHOD_FALLBACK.get(op.method, SideEffects.WRITE)


def check_wire_name(tool: types.Tool, op: Operation) -> Verdict:
    """The listed name is the canonical name's wire form, in the strict or the mcp profile."""
    expected = {profile: WireNames(profile).add(op.canonical_name) for profile in ("strict", "mcp")}
    for profile, wire in expected.items():
        if tool.name == wire:
            return CheckStatus.PASS, f"wire name {tool.name} ({profile} profile)"
    return (
        CheckStatus.FAIL,
        f"listed as {tool.name!r}, expected {expected['strict']!r} (or {expected['mcp']!r})",
    )


def check_description(tool: types.Tool, llm: LlmBlock | None) -> Verdict:
    if llm is None:
        return CheckStatus.SKIP, "no llm block in the contract"
    description = tool.description or ""
    missing = [
        label
        for label, text in (("summary", llm.summary), ("intent", llm.intent))
        if text.strip() not in description
    ]
    if missing:
        return CheckStatus.FAIL, f"description lacks the {' and '.join(missing)}: {description[:120]!r}"
    return CheckStatus.PASS, "summary and intent present"


def check_annotations(tool: types.Tool, op: Operation) -> Verdict:
    effects = side_effects_of(op)
    expected = dict(_EXPECTED[effects])
    expected["idempotent_hint"] = effects in (SideEffects.NONE, SideEffects.READ) or op.method in (
        "PUT",
        "DELETE",
    )
    annotations = tool.annotations
    if annotations is None:
        return CheckStatus.FAIL, "tool has no annotations"
    wrong = [
        f"{key}={getattr(annotations, key)!r} (expected {value!r})"
        for key, value in expected.items()
        if getattr(annotations, key) != value
    ]
    if wrong:
        return CheckStatus.FAIL, f"side_effects={effects.value}: " + ", ".join(wrong)
    return CheckStatus.PASS, f"match side_effects={effects.value}"


def check_meta(tool: types.Tool, op: Operation) -> Verdict:
    """The typed _meta must tell the truth about gating, not only the prose."""
    meta: dict[str, Any] = dict(tool.meta or {})
    llm = op.endpoint.llm
    expected: dict[str, Any] = {
        "colonnade/canonical_name": op.canonical_name,
        "colonnade/side_effects": side_effects_of(op).value,
        "colonnade/contract_version": op.contract.version,
    }
    if llm is not None:
        expected["colonnade/safe_for_agents"] = llm.safe_for_agents
        expected["colonnade/requires_human_approval"] = llm.requires_human_approval
    wrong = [f"{k}={meta.get(k)!r} (expected {v!r})" for k, v in expected.items() if meta.get(k) != v]
    if wrong:
        return CheckStatus.FAIL, "; ".join(wrong)
    return CheckStatus.PASS, "typed _meta matches the contract"


def check_output_schema(tool: types.Tool) -> Verdict:
    """An `outputSchema` must have an object root: one that does not fails a 2025-11-25 `tools/list`."""
    schema = tool.output_schema
    if schema is None:
        return CheckStatus.PASS, "no output schema listed"
    if schema.get("type") != "object":
        return (
            CheckStatus.FAIL,
            f"outputSchema has a {schema.get('type', 'typeless')!r} root: 2025-11-25 clients refuse the "
            'whole tools/list (a non-object result must be listed as {"result": ...})',
        )
    return CheckStatus.PASS, "object root"


def check_example_inputs(tool: types.Tool, llm: LlmBlock | None) -> Verdict:
    if llm is None or not llm.examples:
        return CheckStatus.SKIP, "no examples in the contract"
    validator = jsonschema.Draft202012Validator(tool.input_schema)
    problems = []
    for i, example in enumerate(llm.examples):
        for err in validator.iter_errors(example.input):
            where = "/" + "/".join(str(p) for p in err.absolute_path)
            problems.append(f"example {i}{where if where != '/' else ''}: {err.message}")
    if problems:
        return CheckStatus.FAIL, "; ".join(problems[:5])
    return CheckStatus.PASS, f"{len(llm.examples)} example input(s) valid"


def check_example_result(result: types.CallToolResult, example: LlmExample) -> Verdict:
    """The result carries an object as structured content, and contains what the example expects."""
    structured = result.structured_content
    if structured is not None and not isinstance(structured, dict):
        return (
            CheckStatus.FAIL,
            f"structured content is {type(structured).__name__}, not an object: MCP clients require an "
            'object (a non-object result travels as {"result": ...})',
        )
    output = result_output(result)
    problem = mismatch(output, example.expected_output_contains)
    if problem is not None:
        shown = json.dumps(output, ensure_ascii=False)[:160]
        return CheckStatus.FAIL, f"result lacks {example.expected_text()!r} ({problem}): {shown}"
    return CheckStatus.PASS, f"contains {example.expected_text()!r}"


def result_output(result: types.CallToolResult) -> Any:
    """The tool's output as JSON data: the JSON text block, else the structured content."""
    for block in result.content:
        if isinstance(block, types.TextContent):
            try:
                return json.loads(block.text)
            except ValueError:
                break
    return result.structured_content


def result_text(result: types.CallToolResult) -> str:
    """Everything a caller can read from a result, to look for expected fragments in."""
    parts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)
