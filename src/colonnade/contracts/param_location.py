"""Where each argument of an operation goes on the HTTP request.

Decided by the `x-in` keyword on its property in the input schema (`path`, `query`, `header`,
`body`, or `raw-body` for a non-object JSON body); without it, `{param}`s of the path go to the
path, and the rest go to the query string for GET/HEAD/DELETE/OPTIONS and to the JSON body
otherwise. `x-name` gives the name on the wire when it differs from the property name (e.g.
header `X-Request-Id`). Shared by the validator, the catalog's HTTP binding and the OpenAPI
import and export, so all four agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from colonnade.contracts.model import Operation, path_parameters

__all__ = ["BODYLESS_METHODS", "ParamLocation", "ParamSpec", "placements"]

BODYLESS_METHODS = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


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


def placements(operation: Operation) -> tuple[ParamSpec, ...]:
    """Every property of the operation's input schema, placed on the request."""
    schema = operation.endpoint.effective_input_schema()
    properties = schema.get("properties") or {}
    in_path = set(path_parameters(operation.endpoint.path))
    default = ParamLocation.QUERY if operation.method in BODYLESS_METHODS else ParamLocation.BODY
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
    return tuple(params)
