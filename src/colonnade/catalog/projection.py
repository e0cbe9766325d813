"""Contract operation -> `Tool`: the agent-facing face of an HTTP endpoint.

Without an `llm` block an operation still becomes a usable tool: its side effects follow the
HTTP method and its description falls back to the endpoint's description or `METHOD path`.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from colonnade.catalog.catalog_errors import DuplicateToolName
from colonnade.catalog.http_binding import binding_for
from colonnade.catalog.naming import WireProfile, to_wire
from colonnade.catalog.tool import Annotations, Determinism, Tool
from colonnade.contracts.llm_ready import verdict_of
from colonnade.contracts.model import (
    Contract,
    ContractStatus,
    Deprecation,
    Operation,
    RuntimeSpec,
    SideEffects,
)
from colonnade.contracts.output_shape import mcp_output_schema

__all__ = [
    "annotations_for",
    "describe",
    "determinism_for",
    "humanize",
    "project_contract",
    "project_operation",
    "side_effects_for",
    "strip_binding_keywords",
]

_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_IDEMPOTENT_WRITES = frozenset({"PUT", "DELETE"})
_BINDING_KEYWORDS = ("x-in", "x-name")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+[0-9]*")
_SENTENCE_END = (".", "!", "?")


def project_contract(contract: Contract, *, profile: WireProfile = "strict") -> list[Tool]:
    """One tool per operation whose endpoint has `mcp: true`, in document order."""
    tools: list[Tool] = []
    seen: dict[str, Operation] = {}
    for operation in contract.operations():
        if not operation.endpoint.mcp:
            continue
        first = seen.setdefault(operation.canonical_name, operation)
        if first is not operation:
            raise DuplicateToolName(operation.canonical_name, _where(first), _where(operation))
        tools.append(project_operation(operation, profile=profile))
    return tools


def project_operation(operation: Operation, *, profile: WireProfile = "strict") -> Tool:
    endpoint = operation.endpoint
    llm = endpoint.llm
    side_effects = side_effects_for(operation)
    input_schema = strip_binding_keywords(endpoint.effective_input_schema())
    title = _title(operation)
    return Tool(
        canonical_name=operation.canonical_name,
        wire_name=to_wire(operation.canonical_name, profile),
        title=title,
        description=describe(operation, input_schema),
        input_schema=input_schema,
        output_schema=copy.deepcopy(endpoint.output_schema),
        mcp_output_schema=mcp_output_schema(endpoint.output_schema),
        llm=llm,
        side_effects=side_effects,
        determinism=(endpoint.runtime and endpoint.runtime.determinism)
        or determinism_for(side_effects, operation.method),
        annotations=annotations_for(side_effects, operation.method, title),
        safe_for_agents=llm.safe_for_agents if llm else side_effects in (SideEffects.NONE, SideEffects.READ),
        requires_human_approval=(
            llm.requires_human_approval if llm else side_effects is SideEffects.DESTRUCTIVE
        ),
        version=operation.contract.version,
        operation=operation.name,
        tags=tuple(endpoint.tags),
        source="contract",
        adapter="http",
        binding=binding_for(operation),
        runtime=endpoint.runtime or RuntimeSpec(),
        owner=operation.contract.owner,
        environment=operation.contract.environment.value if operation.contract.environment else None,
        health_url=_health_url(operation),
        deprecation=_deprecation(operation.contract),
        llm_ready_failing=tuple(dict.fromkeys(code for code, _ in verdict_of(operation).failing)),
        flow_labels=tuple(llm.flow_labels) if llm else (),
    )


def _deprecation(contract: Contract) -> Deprecation | None:
    """The version's notice when it is deprecated (an empty one when the store says only that)."""
    if contract.status is not ContractStatus.DEPRECATED:
        return None
    return contract.deprecation or Deprecation()


def _health_url(operation: Operation) -> str | None:
    backend = operation.contract.backend
    return backend.base_url.rstrip("/") + backend.health_path if backend.health_path else None


def side_effects_for(operation: Operation) -> SideEffects:
    """The declared side effects, else what the HTTP method implies."""
    llm = operation.endpoint.llm
    if llm is not None:
        return llm.side_effects
    if operation.method in _READ_METHODS:
        return SideEffects.READ
    if operation.method == "DELETE":
        return SideEffects.DESTRUCTIVE
    return SideEffects.WRITE


def determinism_for(side_effects: SideEffects, method: str) -> Determinism:
    """none is pure, read is idempotent; writes are idempotent only for PUT and DELETE."""
    if side_effects is SideEffects.NONE:
        return Determinism.PURE
    if side_effects is SideEffects.READ or method in _IDEMPOTENT_WRITES:
        return Determinism.IDEMPOTENT
    return Determinism.SIDE_EFFECTFUL


def annotations_for(side_effects: SideEffects, method: str, title: str | None = None) -> Annotations:
    """MCP hints from side effects; `open_world` is false only for `none` (no backend state touched)."""
    reads = side_effects in (SideEffects.NONE, SideEffects.READ)
    return Annotations(
        read_only=reads,
        destructive=side_effects is SideEffects.DESTRUCTIVE,
        idempotent=reads or method in _IDEMPOTENT_WRITES,
        open_world=side_effects is not SideEffects.NONE,
        title=title,
    )


def describe(operation: Operation, input_schema: dict[str, Any]) -> str:
    """Summary and intent (kept verbatim, so they can be checked), then one `Inputs:` line."""
    endpoint = operation.endpoint
    if endpoint.llm is not None:
        head = f"{_sentence(endpoint.llm.summary)} {endpoint.llm.intent.strip()}".strip()
    elif endpoint.description and endpoint.description.strip():
        head = endpoint.description.strip()
    else:
        head = f"{operation.method} {endpoint.path}"
    inputs = _inputs_line(input_schema)
    return f"{head}\n{inputs}" if inputs else head


def strip_binding_keywords(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of the input schema without `x-in`/`x-name`: HTTP placement is not the agent's business."""
    shown = copy.deepcopy(schema)
    properties = shown.get("properties")
    if isinstance(properties, dict):
        for prop in properties.values():
            if isinstance(prop, dict):
                for keyword in _BINDING_KEYWORDS:
                    prop.pop(keyword, None)
    return shown


def humanize(identifier: str) -> str:
    """`getCustomerByID` / `get_customer_by_id` -> `Get customer by ID` (acronyms kept)."""
    words = [w if w.isupper() and len(w) > 1 else w.lower() for w in _WORD.findall(identifier)]
    if not words:
        return identifier
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


def _title(operation: Operation) -> str:
    title = humanize(operation.endpoint.operation_id)
    if len(operation.endpoint.methods) > 1:
        title = f"{title} ({operation.method})"
    return title


def _inputs_line(schema: dict[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return ""
    required = set(schema.get("required") or ())
    names = [f"{name}*" if name in required else name for name in properties]
    return "Inputs: " + ", ".join(names)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text.endswith(_SENTENCE_END) else f"{text}."


def _where(operation: Operation) -> str:
    return f"{operation.method} {operation.endpoint.path} ({operation.pointer})"
