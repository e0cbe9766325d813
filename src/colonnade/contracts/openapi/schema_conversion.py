"""Turn OpenAPI schema objects into self-contained JSON Schema 2020-12.

Every `$ref` is inlined, so a tool's schema reads on its own. A reference that comes back
to a schema already being expanded (a tree node whose children are nodes) cannot be inlined:
it becomes `{"$ref": "#/$defs/Node"}` and the expansion of `Node` is put under `$defs` at the
root of the schema being built (`SchemaScope.defs()`), which keeps the recursion exact. A def
is named after its component (or the `x-colonnade-def` the exporter wrote on it), uniquely
within that one root.

OpenAPI 3.0 spellings are rewritten on the way: `nullable: true` becomes a type union with
`"null"` (or an `anyOf` when there is no `type`), boolean `exclusiveMinimum`/`exclusiveMaximum`
become the numeric 2020-12 form, `example` becomes `examples`. `xml`, `externalDocs` and
`discriminator` only mean something inside an OpenAPI document, so they are dropped.
A `$ref` with siblings keeps annotation siblings (`description`, `default`, `nullable`...)
on the inlined target and wraps the target in `allOf` for any other keyword.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.refs import RefResolver, join_pointer

__all__ = ["DEF_NAME_EXTENSION", "SchemaConverter", "SchemaScope", "map_subschemas", "without_flagged"]

DEF_NAME_EXTENSION = "x-colonnade-def"
"""On a component schema: the `$defs` name it had in the contract (the exporter renames clashes)."""

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "contentSchema",
    }
)
_OPENAPI_ONLY = frozenset({"xml", "externalDocs", "discriminator"})
_REF_OVERLAY = frozenset(
    {"description", "title", "default", "example", "examples", "deprecated", "readOnly", "writeOnly"}
    | {"nullable"}
)
_REF_IGNORED = frozenset({"$ref", "summary"})
_DEF_NAME = re.compile(r"[^A-Za-z0-9_.-]+")

Schema = Any  # a JSON Schema: a mapping or a boolean


def map_subschemas(schema: Mapping[str, Any], fn: Callable[[Schema], Schema]) -> dict[str, Any]:
    """A copy of `schema` with `fn` applied to each direct subschema (properties, items, allOf...)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: fn(sub) for name, sub in value.items()}
        elif (key in _SCHEMA_LISTS or key in _SCHEMA_VALUES) and isinstance(value, list):
            out[key] = [fn(sub) for sub in value]
        elif key in _SCHEMA_VALUES:
            out[key] = fn(value)
        else:
            out[key] = value
    return out


def without_flagged(schema: Schema, flag: str) -> Schema:
    """Drop properties marked `flag: true` at any depth: readOnly ones from inputs, writeOnly from outputs."""
    if not isinstance(schema, Mapping):
        return schema
    out = map_subschemas(schema, lambda sub: without_flagged(sub, flag))
    properties = out.get("properties")
    if isinstance(properties, dict):
        dropped = {n for n, s in properties.items() if isinstance(s, Mapping) and s.get(flag) is True}
        if dropped:
            out["properties"] = {n: s for n, s in properties.items() if n not in dropped}
            required = out.get("required")
            if isinstance(required, list):
                kept = [r for r in required if r not in dropped]
                if kept:
                    out["required"] = kept
                else:
                    del out["required"]
    return out


def _exclusive_bounds(schema: dict[str, Any]) -> None:
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = schema.get(exclusive)
        if not isinstance(flag, bool):
            continue
        del schema[exclusive]
        if flag and inclusive in schema:
            schema[exclusive] = schema.pop(inclusive)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if schema.pop("nullable", None) is not True:
        return schema
    kind = schema.get("type")
    if kind is None:
        if not schema:
            return schema
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(kind, str) and kind != "null":
        schema["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        schema["type"] = [*kind, "null"]
    enum = schema.get("enum")
    if isinstance(enum, list) and None not in enum:
        schema["enum"] = [*enum, None]
    return schema


def _normalize(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrite the OpenAPI 3.0 spellings of one schema object (not its subschemas) to 2020-12."""
    for key in _OPENAPI_ONLY:
        schema.pop(key, None)
    _exclusive_bounds(schema)
    if "example" in schema:
        example = schema.pop("example")
        schema.setdefault("examples", [example])
    return _nullable(schema)


class SchemaConverter:
    """Converts the schemas of one OpenAPI document; shared by all the roots built from it."""

    def __init__(self, resolver: RefResolver) -> None:
        self.resolver = resolver
        self._cache: dict[str, Schema] = {}
        self.cycle_refs = 0

    def scope(self) -> SchemaScope:
        """A fresh scope for one root schema (an operation's input or its output)."""
        return SchemaScope(self)

    def cached(self, pointer: str) -> Schema | None:
        hit = self._cache.get(pointer)
        return copy.deepcopy(hit) if hit is not None else None

    def remember(self, pointer: str, schema: Schema) -> None:
        self._cache[pointer] = copy.deepcopy(schema)


class SchemaScope:
    """Converts the schemas that end up in one root and collects the `$defs` their cycles need."""

    def __init__(self, converter: SchemaConverter) -> None:
        self._converter = converter
        self._resolver = converter.resolver
        self._emitted: dict[str, str] = {}

    def convert(self, node: Any, pointer: str) -> Schema:
        """The 2020-12 form of the schema `node` found at `pointer`, with local refs inlined.

        A root that is a `$ref` is always inlined, so an object body stays an object; deeper
        refs to a recursive schema stay `{"$ref": "#/$defs/Name"}` rather than unrolling it once.
        """
        if isinstance(node, Mapping) and "$ref" in node:
            return self._walk_ref(node, pointer, (), inline=True)
        return self._walk(node, pointer, ())

    def defs(self) -> dict[str, Schema]:
        """The `$defs` every cycle met so far needs (expanding a def may meet further cycles)."""
        out: dict[str, Schema] = {}
        while len(out) < len(self._emitted):
            for pointer, name in list(self._emitted.items()):
                if name not in out:
                    target = self._resolver.lookup(pointer, ref=f"#{pointer}", at=pointer)
                    out[name] = self._walk(target, pointer, (pointer,))
        return out

    def _walk(self, node: Any, pointer: str, stack: tuple[str, ...]) -> Schema:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise OpenApiError(
                f"expected a schema object, found {type(node).__name__}",
                pointer=pointer,
                hint="a schema is a mapping such as {type: string}",
            )
        if "$ref" in node:
            return self._walk_ref(node, pointer, stack, inline=False)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == DEF_NAME_EXTENSION:
                continue
            at = join_pointer(pointer, key)
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {n: self._walk(s, join_pointer(at, n), stack) for n, s in value.items()}
            elif (key in _SCHEMA_LISTS or key in _SCHEMA_VALUES) and isinstance(value, list):
                out[key] = [self._walk(s, join_pointer(at, i), stack) for i, s in enumerate(value)]
            elif key in _SCHEMA_VALUES:
                out[key] = self._walk(value, at, stack)
            else:
                out[key] = copy.deepcopy(value)
        return _normalize(out)

    def _walk_ref(
        self, node: Mapping[str, Any], pointer: str, stack: tuple[str, ...], *, inline: bool
    ) -> Schema:
        self._resolver.follow(node, pointer)  # fails early on a ref chain that loops on itself
        at = join_pointer(pointer, "$ref")
        target_pointer, target = self._resolver.resolve(node["$ref"], at=at)
        base = self._expand(target_pointer, target, stack, inline=inline)
        siblings = {k: v for k, v in node.items() if k not in _REF_IGNORED}
        if not siblings:
            return base
        structural = {k: v for k, v in siblings.items() if k not in _REF_OVERLAY}
        merged: dict[str, Any]
        if structural or not isinstance(base, dict):
            rest = self._walk(structural, pointer, stack) if structural else {}
            merged = {"allOf": [base], **rest}
        else:
            merged = base
        merged.update(copy.deepcopy({k: v for k, v in siblings.items() if k in _REF_OVERLAY}))
        return _normalize(merged)

    def _def_ref(self, pointer: str) -> dict[str, str]:
        """`{"$ref": "#/$defs/Name"}` for the schema at `pointer`, naming it on first use."""
        if pointer not in self._emitted:
            target = self._resolver.lookup(pointer, ref=f"#{pointer}", at=pointer)
            given = target.get(DEF_NAME_EXTENSION) if isinstance(target, Mapping) else None
            last = pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            base = _DEF_NAME.sub("_", given if isinstance(given, str) else last).strip("_") or "Schema"
            taken = set(self._emitted.values())
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            self._emitted[pointer] = name
        return {"$ref": f"#/$defs/{self._emitted[pointer]}"}

    def _expand(self, pointer: str, target: Any, stack: tuple[str, ...], *, inline: bool) -> Schema:
        """The target of a ref: inlined, or a `$defs` ref when it recurses (a cycle, or not `inline`)."""
        if pointer in stack:
            self._converter.cycle_refs += 1
            return self._def_ref(pointer)
        hit = self._converter.cached(pointer)
        if hit is not None:
            return hit
        before = self._converter.cycle_refs
        schema = self._walk(target, pointer, (*stack, pointer))
        if self._converter.cycle_refs == before:
            self._converter.remember(pointer, schema)
        elif not inline and pointer in self._emitted:
            return self._def_ref(pointer)
        return schema
