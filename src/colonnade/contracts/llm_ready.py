"""The LLM-ready verdict of each MCP-exposed endpoint: can a model pick it, call it and read it right?

Seven criteria, each named so a failing one says what to fix. The verdict is a report by default;
in V2 mode ("every new MCP-exposed endpoint must be LLM-ready") a new endpoint that fails is a
finding (LLM001): an error in a published contract, a warning in a draft, while the endpoints of
the previous version are grandfathered and listed (LLM002).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.model import Contract, ContractStatus, Operation, SideEffects

__all__ = [
    "CRITERIA",
    "GRANDFATHERED",
    "NOT_LLM_READY",
    "Criterion",
    "Verdict",
    "llm_ready_findings",
    "verdict_of",
    "verdicts",
]

NOT_LLM_READY = "LLM001"
GRANDFATHERED = "LLM002"
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class Criterion:
    code: str
    name: str
    rule: str


CRITERIA = (
    Criterion("R1", "purpose", "llm.summary says what the tool does: 20-160 characters, at least 4 words"),
    Criterion(
        "R2",
        "when to use",
        "llm.intent says when to use it: 30-360 characters, at least 6 words, not the summary",
    ),
    Criterion(
        "R3", "stable name", "llm.tool_name is declared, so the name survives refactors of the operation id"
    ),
    Criterion(
        "R4", "typed input", "the input schema is an object whose every property has a type and a description"
    ),
    Criterion("R5", "typed output", "an output_schema says what the result holds"),
    Criterion(
        "R6",
        "declared effects",
        "side_effects agree with the HTTP method, and a destructive tool requires human approval",
    ),
    Criterion(
        "R7", "example", "at least one example (a valid contract's examples fit its input schema: UAC010)"
    ),
)
_BY_CODE = {c.code: c for c in CRITERIA}


@dataclass(frozen=True, slots=True)
class Verdict:
    """One endpoint's verdict; `failing` names each criterion it misses, with why."""

    tool: str
    pointer: str
    failing: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not self.failing

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "path": self.pointer,
            "llm_ready": self.ready,
            "failing": [
                {"criterion": code, "name": _BY_CODE[code].name, "why": why} for code, why in self.failing
            ],
        }


def verdicts(contract: Contract, findings: Sequence[Finding] = ()) -> list[Verdict]:
    """The verdict of every MCP-exposed operation of a valid contract; `findings` (the validator's)
    are accepted for callers that have them, the criteria read the contract itself."""
    return [_verdict(op, findings) for op in contract.operations() if op.endpoint.mcp]


def verdict_of(operation: Operation) -> Verdict:
    """One operation's verdict, as the catalog keeps it on the projected tool for the pages."""
    return _verdict(operation, ())


def llm_ready_findings(
    contract: Contract, findings: Sequence[Finding] = (), *, legacy: Iterable[str] = ()
) -> list[Finding]:
    """V2 mode: LLM001 for each new endpoint that is not LLM-ready (error unless the contract is a
    draft), LLM002 (a warning) listing the grandfathered endpoints of the previous version."""
    grandfathered = set(legacy)
    severity = Severity.WARNING if contract.status is ContractStatus.DRAFT else Severity.ERROR
    out: list[Finding] = []
    kept: list[str] = []
    for verdict in verdicts(contract, findings):
        if verdict.tool in grandfathered:
            if not verdict.ready:
                kept.append(verdict.tool)
            continue
        if verdict.ready:
            continue
        missing = "; ".join(f"{code} {_BY_CODE[code].name}: {why}" for code, why in verdict.failing)
        out.append(
            Finding(
                NOT_LLM_READY,
                severity,
                verdict.pointer,
                f"new MCP endpoint {verdict.tool!r} is not LLM-ready: {missing}",
                "meet each failing criterion (docs/change-control.md#llm-ready), or set `mcp: false` "
                "until it does",
            )
        )
    if kept:
        out.append(
            Finding(
                GRANDFATHERED,
                Severity.WARNING,
                "/endpoints",
                f"{len(kept)} endpoint(s) of the previous version are not LLM-ready and are grandfathered: "
                + ", ".join(sorted(kept)),
                "bring them up to the criteria when you next touch them",
            )
        )
    return out


def _verdict(op: Operation, findings: Sequence[Finding]) -> Verdict:
    failing: list[tuple[str, str]] = []
    llm = op.endpoint.llm
    if llm is None:
        failing.extend((code, "no llm block") for code in ("R1", "R2", "R3", "R7"))
    else:
        failing.extend(_texts(llm.summary, llm.intent))
    schema = op.endpoint.effective_input_schema()
    untyped = _untyped(schema)
    if schema.get("type") != "object":
        failing.append(("R4", "the input schema is not an object"))
    elif untyped:
        failing.append(("R4", f"properties without a type or description: {', '.join(untyped)}"))
    if op.endpoint.output_schema is None:
        failing.append(("R5", "no output_schema"))
    failing.extend(_effects(op, findings))
    if llm is not None and not llm.examples:
        failing.append(("R7", "no examples"))
    failing.sort(key=lambda item: item[0])
    return Verdict(op.tool_name, op.pointer, failing)


def _texts(summary: str, intent: str) -> list[tuple[str, str]]:
    failing: list[tuple[str, str]] = []
    if not 20 <= len(summary.strip()) <= 160 or len(summary.split()) < 4:
        failing.append(("R1", f"summary of {len(summary.strip())} characters, {len(summary.split())} words"))
    if (
        not 30 <= len(intent.strip()) <= 360
        or len(intent.split()) < 6
        or intent.strip().lower() == summary.strip().lower()
    ):
        failing.append(("R2", f"intent of {len(intent.strip())} characters, {len(intent.split())} words"))
    return failing


def _untyped(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    return sorted(
        name
        for name, spec in properties.items()
        if not isinstance(spec, dict)
        or not (spec.get("type") or spec.get("enum") or spec.get("const"))
        or not spec.get("description")
    )


def _effects(op: Operation, findings: Sequence[Finding]) -> list[tuple[str, str]]:
    llm = op.endpoint.llm
    if llm is None:
        return [("R6", "side effects not declared (no llm block)")]
    if op.method in _READ_METHODS and llm.side_effects not in (SideEffects.NONE, SideEffects.READ):
        return [("R6", f"{op.method} declared {llm.side_effects.value}")]
    if op.method not in _READ_METHODS and llm.side_effects in (SideEffects.NONE, SideEffects.READ):
        return [("R6", f"{op.method} declared {llm.side_effects.value}")]
    if llm.side_effects is SideEffects.DESTRUCTIVE and not llm.requires_human_approval:
        return [("R6", "destructive without requires_human_approval")]
    return []
