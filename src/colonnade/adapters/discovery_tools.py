"""The discovery tools `search_tools` and `describe_tool`, executed by the `builtin` adapter.

An agent shown a few routed tools can still reach the rest of the catalog: it searches, reads a
compact card, and calls the tool by its wire name (calls resolve against the catalog, not the
last listing). Search and description only ever show tools the caller may call: the same
`Authorizer.visible` answer the listings use, given by the composition root as a `ToolReach`
(adapters know no governance).
"""

from __future__ import annotations

from typing import Any, Protocol

from colonnade.adapters.outcome import AdapterOutcome, OutcomeKind
from colonnade.adapters.registry import Invocation
from colonnade.catalog.builtins import builtin_tool
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal
from colonnade.routing.permits import permits
from colonnade.routing.router import CallerAllowed, Router

__all__ = ["DESCRIBE_TOOL", "MAX_K", "SEARCH_TOOLS", "Ambiguity", "DiscoveryTools", "ToolReach"]


class Ambiguity(Protocol):
    """A name several tools the caller may see bear: refused with the candidates."""

    @property
    def code(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def details(self) -> dict[str, Any]: ...


class ToolReach(Protocol):
    """Which tools a caller may reach, and which tool a name means to it (governance's rules)."""

    def visible(self, principal: Principal) -> CallerAllowed: ...

    def find(self, name: str, principal: Principal) -> Tool | Ambiguity | None: ...

    def near(self, name: str, principal: Principal) -> list[str]: ...


SEARCH_TOOLS = "search_tools"
DESCRIBE_TOOL = "describe_tool"
MAX_K = 50


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
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "Wire name, canonical name, or bare tool name (e.g. get_invoice) when unique.",
        }
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


SEARCH_TOOL = builtin_tool(
    SEARCH_TOOLS,
    wire_name=SEARCH_TOOLS,
    title="Search tools",
    description=(
        "Find gateway tools for a task when none of the listed tools fits. Returns compact "
        "cards (name, summary, side effects, input schema); call a found tool by its name."
    ),
    input_schema=_SEARCH_INPUT,
    output_schema=_SEARCH_OUTPUT,
)
DESCRIBE_TOOL_TOOL = builtin_tool(
    DESCRIBE_TOOL,
    wire_name=DESCRIBE_TOOL,
    title="Describe a tool",
    description=(
        "One tool in full (by wire, canonical or unique bare name): schemas, side effects, approval."
    ),
    input_schema=_DESCRIBE_INPUT,
    output_schema=_DESCRIBE_OUTPUT,
)


class DiscoveryTools:
    """The two discovery tools and their handlers, over one catalog, router and authorizer."""

    def __init__(self, catalog: Catalog, router: Router, reach: ToolReach) -> None:
        self.catalog = catalog
        self.router = router
        self.reach = reach

    @property
    def tools(self) -> tuple[Tool, Tool]:
        return SEARCH_TOOL, DESCRIBE_TOOL_TOOL

    async def search(self, invocation: Invocation) -> AdapterOutcome:
        arguments = invocation.arguments
        allowed = self.reach.visible(invocation.principal)
        decision = self.router.route(
            str(arguments["query"]), caller_allowed=allowed, k=int(arguments.get("k", 10))
        )
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
        return AdapterOutcome(OutcomeKind.SUCCESS, body=output)

    async def describe(self, invocation: Invocation) -> AdapterOutcome:
        name = str(invocation.arguments["name"])
        principal = invocation.principal
        tool = self.reach.find(name, principal)
        if tool is not None and not isinstance(tool, Tool):
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code=tool.code,
                message=tool.message,
                details=tool.details,
            )
        if tool is None or not permits(self.reach.visible(principal), tool.canonical_name):
            # A tool the caller may not call is described exactly like one that does not exist.
            near = self.reach.near(name, principal)
            hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            return AdapterOutcome(
                OutcomeKind.TERMINAL_ERROR,
                error_code="I-REQ-UNKNOWN-TOOL",
                message=f"no tool named '{name}'{hint} (use {SEARCH_TOOLS} to find tools by what they do)",
                details={"tool_id": name, "did_you_mean": near},
            )
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
        return AdapterOutcome(OutcomeKind.SUCCESS, body=output)


def _card(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.wire_name,
        "canonical_name": tool.canonical_name,
        "title": tool.title,
        "summary": tool.summary,
        "side_effects": tool.side_effects.value,
        "requires_human_approval": tool.requires_human_approval,
        "input_schema": tool.input_schema,
    }
