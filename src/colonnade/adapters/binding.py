"""How a contract operation maps onto an HTTP request; built once at projection time.

Where each argument goes is decided by the `x-in` keyword on its property in the input
schema (`path`, `query`, `header`, `body`, or `raw-body` for a non-object JSON body); without
it, `{param}`s of the path go to the path, and the rest go to the query string for
GET/HEAD/DELETE/OPTIONS and to the JSON body otherwise. `x-name` gives the name on the wire
when it differs from the property name (e.g. header `X-Request-Id`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from colonnade.contracts.model import BackendAuth, Operation, path_parameters

__all__ = ["HttpBinding", "ParamLocation", "ParamSpec", "binding_for"]

_BODYLESS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


class ParamLocation(StrEnum):
    PATH = "path"
    QUERY = "query"
    HEADER = "header"
    BODY = "body"
    RAW_BODY = "raw-body"


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One argument: its property name, where it goes and its name on the wire."""

    name: str
    location: ParamLocation
    wire_name: str


@dataclass(frozen=True, slots=True)
class HttpBinding:
    """Everything the HTTP adapter needs to execute one operation; no governance here."""

    base_url: str
    method: str
    path: str
    params: tuple[ParamSpec, ...] = ()
    auth: BackendAuth | None = None
    timeout_ms: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> ParamSpec | None:
        for spec in self.params:
            if spec.name == name:
                return spec
        return None


def binding_for(operation: Operation) -> HttpBinding:
    """Derive the binding of an operation from its path, method and input schema."""
    schema = operation.endpoint.effective_input_schema()
    properties = schema.get("properties") or {}
    in_path = set(path_parameters(operation.endpoint.path))
    default = ParamLocation.QUERY if operation.method in _BODYLESS else ParamLocation.BODY
    params: list[ParamSpec] = []
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        declared = prop.get("x-in")
        if declared is not None:
            location = ParamLocation(declared)
        elif name in in_path:
            location = ParamLocation.PATH
        else:
            location = default
        params.append(ParamSpec(name, location, str(prop.get("x-name", name))))
    backend = operation.contract.backend
    return HttpBinding(
        base_url=backend.base_url.rstrip("/"),
        method=operation.method,
        path=operation.endpoint.path,
        params=tuple(params),
        auth=backend.auth,
        timeout_ms=backend.timeout_ms,
    )
