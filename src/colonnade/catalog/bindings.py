"""`Binding`: how a tool is executed, as a tagged union owned by the catalog.

Each kind is executed by one adapter, chosen from the adapter registry by `kind`; nothing between
the catalog and the adapters looks inside a binding, except the network policy, which must know
where a binding can reach (and refuses a kind it cannot check). Downstream MCP servers and organs
join the union as their own kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from colonnade.catalog.http_binding import HttpBinding

__all__ = ["Binding", "BuiltinBinding", "HttpBinding"]


@dataclass(frozen=True, slots=True)
class BuiltinBinding:
    """A tool the gateway answers itself (search, describe, commit): `name` picks the handler."""

    name: str
    kind: Literal["builtin"] = "builtin"


Binding: TypeAlias = HttpBinding | BuiltinBinding
