"""What a tool's result looks like to MCP clients: always an object.

MCP wants a tool's structured content to be a JSON object, and its `outputSchema` to have an
object root (required on the wire through 2025-11-25: one non-object schema made the whole
`tools/list` fail). Many real operations answer with an array or a scalar (petstore's
`findPetsByStatus`, `loginUser`); such a result travels as `{"result": ...}`, and its schema is
wrapped the same way, as the MCP SDK does for functions. The projection (the listed schema), the
MCP rendering (the structured content), the validator and the smoke all follow this one rule:

- a schema that only admits objects is listed as is (with `type: object` made explicit);
- a schema that admits no object is listed wrapped: `{"result": <schema>}`;
- a schema that admits both cannot say in advance which form a result takes, so no output
  schema is listed (the validator warns); the results still follow the rule value by value.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum
from typing import Any

__all__ = ["RESULT_KEY", "OutputShape", "mcp_output_schema", "output_shape", "wrap_result"]

RESULT_KEY = "result"
_HOISTED = ("$schema", "$id", "$defs", "definitions")
_LOCAL_DEFS = ("#/$defs/", "#/definitions/")


class OutputShape(StrEnum):
    OBJECT = "object"
    """Every value the schema admits is an object."""
    OTHER = "other"
    """No value the schema admits is an object (arrays, strings, numbers, booleans, null)."""
    MIXED = "mixed"
    """The schema admits objects and other values, or says nothing about the type."""


def wrap_result(output: Any) -> dict[str, Any]:
    """The structured content of a result: an object as is, anything else as `{"result": ...}`."""
    return output if isinstance(output, dict) else {RESULT_KEY: output}


def output_shape(schema: Any) -> OutputShape:
    """Which kind of values an output schema admits (local `$ref`s followed)."""
    return _shape(schema, schema if isinstance(schema, Mapping) else {}, frozenset())


def mcp_output_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `outputSchema` MCP clients get for a contract's `output_schema` (None: list none)."""
    if schema is None:
        return None
    shape = output_shape(schema)
    if shape is OutputShape.OBJECT:
        return {**copy.deepcopy(schema), "type": "object"}
    if shape is OutputShape.MIXED:
        return None
    inner = {k: copy.deepcopy(v) for k, v in schema.items() if k not in _HOISTED}
    _point_root_refs_at(inner, f"#/properties/{RESULT_KEY}")
    wrapped: dict[str, Any] = {k: copy.deepcopy(schema[k]) for k in _HOISTED if k in schema}
    wrapped.update(
        {
            "type": "object",
            "properties": {RESULT_KEY: inner},
            "required": [RESULT_KEY],
            "additionalProperties": False,
        }
    )
    return wrapped


def _shape(schema: Any, root: Mapping[str, Any], following: frozenset[str]) -> OutputShape:
    if not isinstance(schema, Mapping):
        return OutputShape.MIXED  # `true` admits anything; `false` admits nothing
    found = set(_constraints(schema, root, following))
    if OutputShape.OBJECT in found and OutputShape.OTHER not in found:
        return OutputShape.OBJECT
    if OutputShape.OTHER in found and OutputShape.OBJECT not in found:
        return OutputShape.OTHER
    return OutputShape.MIXED


def _constraints(
    schema: Mapping[str, Any], root: Mapping[str, Any], following: frozenset[str]
) -> Iterator[OutputShape]:
    """What each keyword of `schema` says about the kind of value; all of them must hold."""
    kind = schema.get("type")
    if isinstance(kind, str):
        yield OutputShape.OBJECT if kind == "object" else OutputShape.OTHER
    elif isinstance(kind, list) and kind:
        yield _of_all(OutputShape.OBJECT if k == "object" else OutputShape.OTHER for k in kind)
    if "const" in schema:
        yield OutputShape.OBJECT if isinstance(schema["const"], dict) else OutputShape.OTHER
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        yield _of_all(OutputShape.OBJECT if isinstance(v, dict) else OutputShape.OTHER for v in enum)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref not in following:
        target = _resolve(ref, root)
        if target is not None:
            yield _shape(target, root, following | {ref})
    for member in _members(schema, "allOf"):
        yield _shape(member, root, following)
    for keyword in ("anyOf", "oneOf"):
        members = _members(schema, keyword)
        if members:
            yield _of_all(_shape(member, root, following) for member in members)


def _of_all(shapes: Iterable[OutputShape]) -> OutputShape:
    """The shape of a union: one kind when every branch agrees, else mixed."""
    kinds = set(shapes)
    return kinds.pop() if len(kinds) == 1 else OutputShape.MIXED


def _members(schema: Mapping[str, Any], keyword: str) -> list[Any]:
    members = schema.get(keyword)
    return members if isinstance(members, list) else []


def _resolve(ref: str, root: Mapping[str, Any]) -> Any:
    for prefix in _LOCAL_DEFS:
        if ref.startswith(prefix):
            defs = root.get(prefix[2:-1])
            return defs.get(ref[len(prefix) :]) if isinstance(defs, Mapping) else None
    return root if ref == "#" else None


def _point_root_refs_at(schema: Any, pointer: str) -> None:
    """A wrapped schema moves under `properties.result`: its `#`-relative references move with it."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")) and not ref.startswith(_LOCAL_DEFS):
            schema["$ref"] = pointer + ref[1:]
        for value in schema.values():
            _point_root_refs_at(value, pointer)
    elif isinstance(schema, list):
        for item in schema:
            _point_root_refs_at(item, pointer)
