"""Combine path, query and header parameters and a JSON body into one input schema.

Each property says where it goes on the wire with `x-in` (the convention of
`colonnade.catalog.http_binding`) and, when its property name had to differ from the wire name,
gives that name with `x-name`. Names never merge silently: when two arguments want the same
property name, the later one (path, then query, header, body) is prefixed with its location
(`body_id`), and numbered if that is taken too. Path parameters are renamed in the path
template itself, so they never need `x-name`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from colonnade.contracts.openapi.naming import identifier, unique
from colonnade.contracts.param_location import ParamLocation

__all__ = ["NAME_EXTENSION", "TEMPLATE_PARAM", "InputField", "assemble_input", "property_name"]

NAME_EXTENSION = "x-colonnade-name"
"""Extension naming the contract property of a parameter or body field (written by the exporter)."""

_LOCATION_ORDER = {
    ParamLocation.PATH: 0,
    ParamLocation.QUERY: 1,
    ParamLocation.HEADER: 2,
    ParamLocation.BODY: 3,
    ParamLocation.RAW_BODY: 3,
}
_PREFIX = {
    ParamLocation.PATH: "path",
    ParamLocation.QUERY: "query",
    ParamLocation.HEADER: "header",
    ParamLocation.BODY: "body",
    ParamLocation.RAW_BODY: "body",
}
TEMPLATE_PARAM = re.compile(r"\{([^{}/]+)\}")
_LOCATION_KEYWORDS = ("x-in", "x-name", NAME_EXTENSION)


@dataclass(frozen=True, slots=True)
class InputField:
    """One argument as the OpenAPI document describes it."""

    wire_name: str
    location: ParamLocation
    schema: Any
    required: bool
    preferred_name: str | None = None


def property_name(wire_name: str, location: ParamLocation) -> str:
    """The property name an argument gets when nothing clashes: `X-Request-Id` -> `x_request_id`."""
    fallback = "body" if location is ParamLocation.RAW_BODY else "param"
    return identifier(wire_name, lower=location is ParamLocation.HEADER) or fallback


def _property_schema(field: InputField, name: str) -> dict[str, Any]:
    schema = dict(field.schema) if isinstance(field.schema, Mapping) else {}
    for keyword in _LOCATION_KEYWORDS:
        schema.pop(keyword, None)
    located: dict[str, Any] = {"x-in": field.location.value}
    if field.location not in (ParamLocation.PATH, ParamLocation.RAW_BODY) and name != field.wire_name:
        located["x-name"] = field.wire_name
    return {**located, **schema}


def assemble_input(
    path: str, fields: list[InputField], defs: Mapping[str, Any]
) -> tuple[dict[str, Any], str]:
    """The input schema of an operation and its path template with path parameters renamed."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    renamed: dict[str, str] = {}
    for field in sorted(fields, key=lambda f: _LOCATION_ORDER[f.location]):
        name = field.preferred_name
        if not name or name in properties:
            name = property_name(field.wire_name, field.location)
        if name in properties:
            name = unique(f"{_PREFIX[field.location]}_{name}", properties)
        properties[name] = _property_schema(field, name)
        if field.location is ParamLocation.PATH:
            renamed[field.wire_name] = name
        if field.required or field.location is ParamLocation.PATH:
            required.append(name)
    path = TEMPLATE_PARAM.sub(lambda m: "{" + renamed.get(m.group(1), m.group(1)) + "}", path)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if defs:
        schema["$defs"] = dict(defs)
    return schema, path
