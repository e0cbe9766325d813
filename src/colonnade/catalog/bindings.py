"""`Binding`: how a tool is executed, as a tagged union owned by the catalog.

Each kind is executed by one adapter, chosen from the adapter registry by `kind`; nothing between
the catalog and the adapters looks inside a binding, except the network policy, which must know
where a binding can reach (and refuses a kind it cannot check). Organs will join the union as
their own kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from colonnade.catalog.http_binding import HttpBinding

__all__ = ["Binding", "BuiltinBinding", "HttpBinding", "McpBinding"]


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


Binding: TypeAlias = HttpBinding | BuiltinBinding | McpBinding
