"""Which tool a caller means: its canonical or wire name, else its bare `llm.tool_name` when unambiguous.

The UAC ADR calls `llm.tool_name` "the stable MCP tool name", and people and agents use it that
way (`get_invoice`), although a tool is served as `acme:billing:get_invoice` (canonical) and
`acme__billing__get_invoice` (wire). So every place that takes a tool name (calls over REST and
MCP, `GET /v1/tools/{name}`, `describe_tool`, the CLI) accepts the bare name too, when exactly one
of the tools the caller may see bears it. Several visible tools bearing it is an ambiguity, answered
with the candidates; tools the caller may not see never count, so an alias neither resolves to
them nor reveals them. Exact names keep their meaning: they resolve first, and their
authorization is the caller's business, as before. Lookups are O(1) (the catalog's alias index);
the caller's visibility is asked only when the exact name is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import Authorizer, permits
from colonnade.governance.principal import Principal
from colonnade.routing.router import CallerAllowed

__all__ = ["AMBIGUOUS_TOOL", "AmbiguousName", "CatalogReach", "find_tool", "near_names"]

AMBIGUOUS_TOOL = "I-REQ-AMBIGUOUS-TOOL"


@dataclass(frozen=True, slots=True)
class AmbiguousName:
    """A bare name that several tools the caller may see bear."""

    name: str
    candidates: tuple[Tool, ...]

    @property
    def code(self) -> str:
        return AMBIGUOUS_TOOL

    @property
    def message(self) -> str:
        names = ", ".join(f"'{tool.canonical_name}'" for tool in self.candidates)
        return f"'{self.name}' names {len(self.candidates)} tools: {names}; call one by its full name"

    @property
    def details(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "candidates": [
                {"canonical_name": tool.canonical_name, "wire_name": tool.wire_name}
                for tool in self.candidates
            ],
        }


def find_tool(
    catalog: Catalog, name: str, authorizer: Authorizer, principal: Principal
) -> Tool | AmbiguousName | None:
    """The served tool `name` means for this principal; None when it means none."""
    exact = catalog.get(name)
    if exact is not None:
        return exact
    bearers = catalog.aliased(name)
    if not bearers:
        return None
    allowed = authorizer.visible(principal)
    visible = tuple(tool for tool in bearers if permits(allowed, tool.canonical_name))
    if len(visible) > 1:
        return AmbiguousName(name, visible)
    return visible[0] if visible else None


def near_names(
    catalog: Catalog, name: str, authorizer: Authorizer, principal: Principal, limit: int = 3
) -> list[str]:
    """ "Did you mean": names close to `name` that this principal may call, closest first.

    A close bare name is offered as is when it is unique among the tools the caller may see, and
    as the canonical names of its bearers when it is not; tools the caller may not see never show.
    """
    allowed = authorizer.visible(principal)
    found: list[str] = []
    for close in catalog.near(name, limit=limit * 2):
        tool = catalog.get(close)
        if tool is not None:
            found.extend([close] if permits(allowed, tool.canonical_name) else [])
            continue
        bearers = [t.canonical_name for t in catalog.aliased(close) if permits(allowed, t.canonical_name)]
        found.extend([close] if len(bearers) == 1 else bearers)
    return list(dict.fromkeys(found))[:limit]


class CatalogReach:
    """The tools of one catalog a caller may reach, by the gateway's authorizer (for the discovery tools)."""

    def __init__(self, catalog: Catalog, authorizer: Authorizer) -> None:
        self.catalog = catalog
        self.authorizer = authorizer

    def visible(self, principal: Principal) -> CallerAllowed:
        """What `search_tools` ranks for the principal: the tools it may call now (`listed`)."""
        return self.authorizer.listed(principal)

    def find(self, name: str, principal: Principal) -> Tool | AmbiguousName | None:
        return find_tool(self.catalog, name, self.authorizer, principal)

    def near(self, name: str, principal: Principal) -> list[str]:
        return near_names(self.catalog, name, self.authorizer, principal)
