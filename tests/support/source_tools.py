"""Tools of non-contract sources (e.g. an upstream MCP server), built directly as catalog records."""

from __future__ import annotations

from colonnade.catalog.tool import Annotations, Tool
from colonnade.contracts.model import Determinism, SideEffects

__all__ = ["source_tool"]


def source_tool(
    canonical: str,
    wire: str | None = None,
    *,
    title: str = "Clock",
    description: str = "A clock.",
    side_effects: SideEffects = SideEffects.NONE,
) -> Tool:
    """A read-only tool whose names no contract rule checked; `wire` defaults to `a__b__c`."""
    pure = side_effects is SideEffects.NONE
    return Tool(
        canonical_name=canonical,
        wire_name=wire or canonical.replace(":", "__"),
        title=title,
        description=description,
        input_schema={"type": "object"},
        side_effects=side_effects,
        determinism=Determinism.PURE if pure else Determinism.IDEMPOTENT,
        annotations=Annotations(read_only=True, destructive=False, idempotent=True, open_world=False),
        safe_for_agents=True,
        requires_human_approval=False,
        version="1.0.0",
        operation=canonical.rsplit(":", 1)[1],
        source="mcp",
        adapter="mcp",
    )
