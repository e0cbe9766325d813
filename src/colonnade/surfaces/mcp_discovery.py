"""Meta tools for lazy discovery: `search_tools` and `describe_tool`, answered by the surface itself.

An agent shown a few routed tools can still reach the rest of the catalog: it searches, reads a
compact card, and calls the tool by its wire name (calls resolve against the catalog, not the
last listing). Search and description only ever show tools the caller may call.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeAlias

import mcp_types as types
from mcp.server.context import ServerRequestContext

from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.schema_validation import violations
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.routing.router import CallerAllowed, Router
from colonnade.surfaces.mcp_render import render_result

__all__ = [
    "DESCRIBE_TOOL",
    "META_TOOL_KEY",
    "SEARCH_TOOLS",
    "CallerScope",
    "Discovery",
    "everything",
    "permits",
    "summary_of",
]

SEARCH_TOOLS = "search_tools"
DESCRIBE_TOOL = "describe_tool"
META_TOOL_KEY = "colonnade/meta_tool"
MAX_K = 50

CallerScope: TypeAlias = Callable[[ServerRequestContext[Any, Any]], CallerAllowed]
"""What the caller of a request may call (authorization plugs in here)."""


def everything(ctx: ServerRequestContext[Any, Any]) -> CallerAllowed:
    """The default scope until authorization lands: every tool in the catalog."""
    return None


def permits(allowed: CallerAllowed, tool_id: str) -> bool:
    if allowed is None:
        return True
    return allowed(tool_id) if callable(allowed) else tool_id in allowed


def summary_of(tool: Tool) -> str:
    """One line on what a tool does: the contract's summary, else the description's first line."""
    if tool.llm is not None:
        return tool.llm.summary
    return tool.description.strip().splitlines()[0] if tool.description.strip() else tool.title


_CARD = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Wire name: call the tool with this name."},
        "canonical_name": {"type": "string"},
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "side_effects": {"type": "string", "enum": ["none", "read", "write", "destructive"]},
        "requires_human_approval": {"type": "boolean"},
        "input_schema": {"type": "object"},
        "score": {"type": "number"},
        "reasons": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "canonical_name", "summary", "side_effects", "input_schema"],
}

_SEARCH_INPUT = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What you want to do, in plain words."},
        "k": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_K,
            "default": 10,
            "description": "How many tools.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

_SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "tools": {"type": "array", "items": _CARD},
        "query_used": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "fallback_used": {"type": "boolean"},
    },
    "required": ["tools", "query_used", "confidence", "fallback_used"],
}

_DESCRIBE_INPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "Wire name or canonical name of the tool."}
    },
    "required": ["name"],
    "additionalProperties": False,
}

_DESCRIBE_OUTPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "canonical_name": {"type": "string"},
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "intent": {"type": "string"},
        "description": {"type": "string"},
        "side_effects": {"type": "string", "enum": ["none", "read", "write", "destructive"]},
        "determinism": {"type": "string"},
        "requires_human_approval": {"type": "boolean"},
        "version": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "input_schema": {"type": "object"},
        "output_schema": {"type": ["object", "null"]},
        "annotations": {"type": "object"},
    },
    "required": ["name", "canonical_name", "summary", "side_effects", "input_schema"],
}

_READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class Discovery:
    """Serves the meta tools; `scope` says what the caller of a request may see."""

    def __init__(self, catalog: Catalog, router: Router, *, scope: CallerScope = everything) -> None:
        self.catalog = catalog
        self.router = router
        self.scope = scope
        self._schemas = {SEARCH_TOOLS: _SEARCH_INPUT, DESCRIBE_TOOL: _DESCRIBE_INPUT}

    def tools(self) -> list[types.Tool]:
        """The meta tools as listed to clients (always on, read-only)."""
        return [
            types.Tool(
                name=SEARCH_TOOLS,
                title="Search tools",
                description=(
                    "Find gateway tools for a task when none of the listed tools fits. Returns compact "
                    "cards (name, summary, side effects, input schema); call a found tool by its name."
                ),
                input_schema=_SEARCH_INPUT,
                output_schema=_SEARCH_OUTPUT,
                annotations=_READ_ONLY.model_copy(update={"title": "Search tools"}),
                _meta={META_TOOL_KEY: True},
            ),
            types.Tool(
                name=DESCRIBE_TOOL,
                title="Describe a tool",
                description="One tool in full (by wire or canonical name): schemas, side effects, approval.",
                input_schema=_DESCRIBE_INPUT,
                output_schema=_DESCRIBE_OUTPUT,
                annotations=_READ_ONLY.model_copy(update={"title": "Describe a tool"}),
                _meta={META_TOOL_KEY: True},
            ),
        ]

    def handles(self, name: str) -> bool:
        return name in self._schemas

    def input_schema(self, name: str) -> dict[str, Any] | None:
        return self._schemas.get(name)

    def call(
        self, ctx: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any], *, legacy: bool
    ) -> types.CallToolResult:
        """Answer one meta-tool call; bad arguments are an I-REQ-SCHEMA tool error, as for any tool."""
        call_id = str(uuid.uuid4())
        found = violations(self._schemas[name], arguments)
        if found:
            summary = "; ".join(f"{v.pointer or '/'}: {v.message}" for v in found[:5])
            status, err = error(
                "I-REQ-SCHEMA",
                f"{len(found)} argument problem(s) for '{name}': {summary}",
                violations=[v.to_dict() for v in found],
            )
            return render_result(CallResult(call_id=call_id, status=status, error=err), legacy=legacy)
        allowed = self.scope(ctx)
        if name == SEARCH_TOOLS:
            result = self._search(call_id, str(arguments["query"]), int(arguments.get("k", 10)), allowed)
        else:
            result = self._describe(call_id, str(arguments["name"]), allowed)
        return render_result(result, legacy=legacy)

    def _search(self, call_id: str, query: str, k: int, allowed: CallerAllowed) -> CallResult:
        decision = self.router.route(query, caller_allowed=allowed, k=k)
        cards = []
        for tool_id in decision.selected:
            tool = self.catalog.get(tool_id)
            if tool is not None and permits(allowed, tool.canonical_name):
                cards.append(
                    {
                        **_card(tool),
                        "score": decision.scores.get(tool_id, 0.0),
                        "reasons": decision.reasons.get(tool_id, []),
                    }
                )
        output = {
            "tools": cards,
            "query_used": decision.query_used,
            "confidence": decision.confidence,
            "fallback_used": decision.fallback_used,
        }
        return CallResult(call_id=call_id, status=CallStatus.SUCCESS, output=output)

    def _describe(self, call_id: str, name: str, allowed: CallerAllowed) -> CallResult:
        tool = self.catalog.get(name)
        if tool is None or not permits(allowed, tool.canonical_name):
            # A tool the caller may not call is described exactly like one that does not exist.
            status, err = error(
                "I-REQ-UNKNOWN-TOOL",
                f"no tool named '{name}' (use {SEARCH_TOOLS} to find tools by what they do)",
                tool_id=name,
            )
            return CallResult(call_id=call_id, status=status, error=err)
        output = {
            **_card(tool),
            "intent": tool.llm.intent if tool.llm is not None else "",
            "description": tool.description,
            "determinism": tool.determinism.value,
            "version": tool.version,
            "tags": list(tool.tags),
            "output_schema": tool.output_schema,
            "annotations": tool.annotations.to_mcp().model_dump(
                mode="json", by_alias=True, exclude_none=True
            ),
        }
        return CallResult(call_id=call_id, status=CallStatus.SUCCESS, output=output)


def _card(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.wire_name,
        "canonical_name": tool.canonical_name,
        "title": tool.title,
        "summary": summary_of(tool),
        "side_effects": tool.side_effects.value,
        "requires_human_approval": tool.requires_human_approval,
        "input_schema": tool.input_schema,
    }
