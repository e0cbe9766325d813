"""`Binding`: how a tool is executed, as a tagged union owned by the catalog.

Each kind is executed by one adapter, chosen from the adapter registry by `kind`; nothing between
the catalog and the adapters looks inside a binding, except the network policy, which must know
where a binding can reach (and refuses a kind it cannot check). Downstream MCP tools carry their
server's transport and URL. Organ functions and pathways of organ functions run in the gateway's
process; they carry what their cards declare, so the manifest and the network policy can be
derived without importing the organ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from colonnade.catalog.http_binding import HttpBinding

__all__ = ["Binding", "BuiltinBinding", "HttpBinding", "McpBinding", "OrganBinding", "PathwayBinding"]


@dataclass(frozen=True, slots=True)
class BuiltinBinding:
    """A tool the gateway answers itself (search, describe, commit): `name` picks the handler."""

    name: str
    kind: Literal["builtin"] = "builtin"


@dataclass(frozen=True, slots=True)
class McpBinding:
    """A tool of a downstream MCP server: `tool` is its name there, `server` the configured server.

    `transport` and `url` say where calls go, for the network policy: an `http` server's URL, or
    for `stdio` a local process the operator configured (no URL).
    """

    server: str
    tool: str
    transport: Literal["stdio", "http"]
    url: str | None = None
    timeout_ms: int | None = None
    kind: Literal["mcp"] = "mcp"


@dataclass(frozen=True, slots=True)
class OrganBinding:
    """One function of an in-process organ: `op` is sent to the organ named `organ` as a stimulus.

    `network` is true when the card declares that the function reaches the network (which the
    gateway cannot confine in-process); `p95_latency_ms` and `max_error_rate` are the card's
    objectives, which become the tool's manifest SLO.
    """

    organ: str
    op: str
    network: bool = False
    p95_latency_ms: int | None = None
    max_error_rate: float | None = None
    kind: Literal["organ"] = "organ"


@dataclass(frozen=True, slots=True)
class PathwayBinding:
    """A declared pathway: organ functions run in order, each output feeding the next step."""

    name: str
    steps: tuple[str, ...]
    network: bool = False
    kind: Literal["pathway"] = "pathway"


Binding: TypeAlias = HttpBinding | BuiltinBinding | McpBinding | OrganBinding | PathwayBinding
