"""The gateway's own tools (search, describe, commit): catalog records, resolved like any tool.

They are not part of the served contract catalog (listings and pages show the APIs' tools), but
a call to one resolves to its record here and then runs the same pipeline as any other call,
executed by the `builtin` adapter: the same span, metrics, log line and input validation.
Their canonical names live in the reserved `colonnade:gateway` namespace; their wire names are
short and fixed (`search_tools`), as clients already know them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from colonnade.catalog.bindings import BuiltinBinding
from colonnade.catalog.tool import Annotations, Tool
from colonnade.contracts.model import Determinism, SideEffects

__all__ = ["BUILTIN_NAMESPACE", "PLATFORM_NAMESPACE", "BuiltinTools", "builtin_tool", "open_to_every_caller"]

BUILTIN_NAMESPACE = "colonnade:gateway"
PLATFORM_NAMESPACE = "colonnade:platform"
"""The platform's core tools (`platform/`): unlike the gateway's meta tools, each is for some personas."""
_VERSION = "1.0.0"


def builtin_tool(
    name: str,
    *,
    wire_name: str,
    title: str,
    description: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any] | None = None,
    side_effects: SideEffects = SideEffects.NONE,
    namespace: str = BUILTIN_NAMESPACE,
) -> Tool:
    """A gateway tool record; read-only unless it has side effects (then not idempotent)."""
    reads = side_effects in (SideEffects.NONE, SideEffects.READ)
    destructive = side_effects is SideEffects.DESTRUCTIVE
    return Tool(
        canonical_name=f"{namespace}:{name}",
        wire_name=wire_name,
        title=title,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        mcp_output_schema=output_schema,  # the gateway's own output schemas are objects already
        side_effects=side_effects,
        determinism=Determinism.PURE if reads else Determinism.SIDE_EFFECTFUL,
        annotations=Annotations(
            read_only=reads, destructive=destructive, idempotent=reads, open_world=not reads, title=title
        ),
        safe_for_agents=True,
        requires_human_approval=False,
        version=_VERSION,
        operation=name,
        source="builtin",
        adapter="builtin",
        binding=BuiltinBinding(name),
        owner="colonnade",
    )


def open_to_every_caller(tool: Tool) -> bool:
    """A meta tool (search, describe, commit) is open to every caller that reached the pipeline; a
    platform tool is decided by the authorizer like an API's tool."""
    return tool.builtin and not tool.canonical_name.startswith(f"{PLATFORM_NAMESPACE}:")


class BuiltinTools:
    """The built-in tools one gateway serves, by canonical and by wire name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._by_name: dict[str, Tool] = {}
        self._unlisted: set[str] = set()
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool, *, listed: bool = True) -> None:
        """`listed=False`: callable by name, but not in listings (iteration leaves it out)."""
        if not tool.builtin:
            raise ValueError(f"{tool.canonical_name!r} is not a built-in tool")
        self._by_name[tool.canonical_name] = tool
        self._by_name[tool.wire_name] = tool
        if listed:
            self._unlisted.discard(tool.canonical_name)
        else:
            self._unlisted.add(tool.canonical_name)

    def get(self, name: str) -> Tool | None:
        return self._by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._by_name

    def __iter__(self) -> Iterator[Tool]:
        """The listed tools."""
        every = dict.fromkeys(self._by_name.values())
        return iter(tool for tool in every if tool.canonical_name not in self._unlisted)
