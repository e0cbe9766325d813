"""What the REST surface shows of a catalog tool: a short entry for listings, the full definition for one.

Backend details (base URL, credential names, HTTP placement of arguments) stay inside the
gateway: they are operators' business, not callers'.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from colonnade.catalog.tool import Tool

__all__ = ["TOOLS_PATH", "tool_detail", "tool_summary"]

TOOLS_PATH = "/v1/tools"
"""`GET` lists the tools; `GET {TOOLS_PATH}/{name}` shows one (a name may hold `/`, percent-encoded)."""


def tool_summary(tool: Tool) -> dict[str, Any]:
    """One `GET /v1/tools` entry: enough to pick a tool and fetch its definition."""
    return {
        "canonical_name": tool.canonical_name,
        "wire_name": tool.wire_name,
        "title": tool.title,
        "version": tool.version,
        "side_effects": tool.side_effects.value,
        "summary": tool.llm.summary if tool.llm is not None else tool.title,
    }


def tool_detail(tool: Tool) -> dict[str, Any]:
    """`GET /v1/tools/{name}`: the whole definition a caller needs, with the digest results cite."""
    return {
        **tool_summary(tool),
        "description": tool.description,
        "determinism": tool.determinism.value,
        "safe_for_agents": tool.safe_for_agents,
        "requires_human_approval": tool.requires_human_approval,
        "operation": tool.operation,
        "tags": list(tool.tags),
        "source": tool.source,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "annotations": asdict(tool.annotations),
        "llm": tool.llm.model_dump(mode="json", exclude_none=True) if tool.llm is not None else None,
        "_meta": tool.meta(),
        "digest": tool.digest,
    }
