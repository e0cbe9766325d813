"""`CoreTool`: one of the gateway's own platform functions, defined once for every surface.

A definition names the function in the gateway's namespace and in ADR-012, its input and output
schemas, its side effects (which set its annotations, and so whether it is retried, keyed or
gated), the scopes that let a caller use it and the personas of ADR-012's matrix that may see it.
`tool()` makes it a built-in catalog record, so MCP, REST (`/v1/calls`) and the pipeline treat it
like any tool; `run` is its one implementation, given the platform's services and the caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from colonnade.catalog.builtins import PLATFORM_NAMESPACE, builtin_tool
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import SideEffects
from colonnade.governance.personas import PERSONA_SCOPES, Persona, Scope
from colonnade.governance.principal import Principal

if TYPE_CHECKING:
    from colonnade.platform.services import PlatformServices

__all__ = ["WIRE_PREFIX", "CoreTool", "Run"]

WIRE_PREFIX = "colonnade__"
"""Wire names of the platform's tools: `colonnade__list_apis`, beside `colonnade__commit_call`."""

Run = Callable[["PlatformServices", Principal, dict[str, Any]], Awaitable[dict[str, Any]]]
"""A core tool's implementation: services, the caller, validated arguments -> the structured output."""


@dataclass(frozen=True, slots=True)
class CoreTool:
    name: str
    """The operation, e.g. `list_apis`: canonical `colonnade:platform:list_apis`, wire "
    "`colonnade__list_apis`."""
    adr_name: str
    group: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    scopes: tuple[Scope, ...]
    """A caller needs one of these (held and allowed by its persona) to call the tool."""
    personas: frozenset[Persona]
    """Who sees the tool (ADR-012's matrix); an agent also needs it on its allow-list."""
    run: Run
    side_effects: SideEffects = SideEffects.READ
    tool: Tool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        strays = [p for p in self.personas if not any(s in PERSONA_SCOPES[p] for s in self.scopes)]
        if strays:
            raise ValueError(f"{self.name}: personas {sorted(strays)} hold none of {list(self.scopes)}")
        record = builtin_tool(
            self.name,
            namespace=PLATFORM_NAMESPACE,
            wire_name=f"{WIRE_PREFIX}{self.name}",
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            side_effects=self.side_effects,
        )
        object.__setattr__(self, "tool", record)

    @property
    def canonical_name(self) -> str:
        return self.tool.canonical_name

    @property
    def wire_name(self) -> str:
        return self.tool.wire_name

    @property
    def writes(self) -> bool:
        return self.side_effects in (SideEffects.WRITE, SideEffects.DESTRUCTIVE)
