"""What changed between two JSON Schemas, as a caller of the tool feels it.

An input schema is what a caller sends: accepting less (a narrowed type, enum, format or bound; a
new required property) breaks callers, accepting more does not. An output schema is what a caller
reads: a field that disappears, becomes optional or changes type breaks callers; a new field does
not. A change this module cannot prove compatible (an edited `oneOf`, a `$ref`) counts as breaking.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

__all__ = ["ChangeClass", "SchemaChange", "diff_schema"]

Side = Literal["input", "output"]


class ChangeClass(StrEnum):
    """What a change asks of the version: breaking -> major, additive -> minor, documentation -> patch."""

    BREAKING = "breaking"
    ADDITIVE = "additive"
    DOCUMENTATION = "documentation"


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One difference at `pointer` (a JSON pointer inside the schema, "" for its root)."""

    kind: str
    change_class: ChangeClass
    pointer: str
    message: str


_DOC_KEYWORDS = frozenset({"description", "title", "examples", "example", "$comment", "deprecated"})
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "format",
        "pattern",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "default",
        "minimum",
        "exclusiveMinimum",
        "minLength",
        "minItems",
        "minProperties",
        "maximum",
        "exclusiveMaximum",
        "maxLength",
        "maxItems",
        "maxProperties",
        "x-in",
        "x-name",
    }
)
_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_ANY_TYPE = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def diff_schema(old: Any, new: Any, side: Side, pointer: str = "") -> list[SchemaChange]:
    """Every change from `old` to `new`, classified for the `side` the schema describes."""
    return list(_diff(old, new, side, pointer))


def _diff(old: Any, new: Any, side: Side, pointer: str) -> Iterator[SchemaChange]:
    if old == new:
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        yield _unproven(side, pointer, "the schema changed shape (a boolean schema or another value)")
        return
    yield from _types(old, new, side, pointer)
    yield from _enum(old, new, side, pointer)
    yield from _keyword_text(old, new, side, pointer)
    if side == "input":
        yield from _bounds(old, new, pointer)
    yield from _properties(old, new, side, pointer)
    yield from _additional(old, new, side, pointer)
    if "items" in old or "items" in new:
        yield from _diff(old.get("items", True), new.get("items", True), side, f"{pointer}/items")
    yield from _documentation(old, new, side, pointer)
    yield from _unknown_keywords(old, new, side, pointer)


def _change(kind: str, change_class: ChangeClass, pointer: str, message: str) -> SchemaChange:
    return SchemaChange(kind, change_class, pointer, message)


def _unproven(side: Side, pointer: str, what: str) -> SchemaChange:
    return _change(
        f"{side}-changed", ChangeClass.BREAKING, pointer, f"{what}; it cannot be proven compatible"
    )


def _type_set(schema: dict[str, Any]) -> frozenset[str]:
    declared = schema.get("type")
    if declared is None:
        return _ANY_TYPE
    names = [declared] if isinstance(declared, str) else list(declared)
    found = {str(name) for name in names}
    if "number" in found:
        found.add("integer")  # every integer is a number
    return frozenset(found)


def _types(old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str) -> Iterator[SchemaChange]:
    before, after = _type_set(old), _type_set(new)
    if before == after:
        return
    lost, gained = sorted(before - after), sorted(after - before)
    shown = f"type {_show(old.get('type'))} -> {_show(new.get('type'))}"
    if side == "input":
        if lost:
            yield _change(
                "input-narrowed", ChangeClass.BREAKING, pointer, f"{shown}: no longer accepts {lost}"
            )
        else:
            yield _change(
                "input-widened", ChangeClass.ADDITIVE, pointer, f"{shown}: now also accepts {gained}"
            )
    elif gained:
        yield _change(
            "output-retyped", ChangeClass.BREAKING, pointer, f"{shown}: results may now be {gained}"
        )
    else:
        yield _change("output-narrowed", ChangeClass.ADDITIVE, pointer, f"{shown}: results are never {lost}")


def _enum(old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str) -> Iterator[SchemaChange]:
    for keyword in ("enum", "const"):
        if old.get(keyword) == new.get(keyword):
            continue
        before = _values(old, keyword)
        after = _values(new, keyword)
        lost = sorted(before - after) if before is not None and after is not None else []
        gained = sorted(after - before) if before is not None and after is not None else []
        if side == "input":
            if after is not None and (before is None or lost):
                what = f"no longer accepts {lost}" if lost else f"now limited to {sorted(after)}"
                yield _change("input-narrowed", ChangeClass.BREAKING, pointer, f"{keyword}: {what}")
            else:
                yield _change(
                    "input-widened", ChangeClass.ADDITIVE, pointer, f"{keyword}: now accepts more values"
                )
        elif before is not None and (after is None or gained):
            what = f"results may now be {gained}" if gained else "results are no longer limited"
            yield _change("output-retyped", ChangeClass.BREAKING, pointer, f"{keyword}: {what}")
        else:
            yield _change(
                "output-narrowed", ChangeClass.ADDITIVE, pointer, f"{keyword}: results take fewer values"
            )


def _values(schema: dict[str, Any], keyword: str) -> frozenset[str] | None:
    if keyword not in schema:
        return None
    values = schema[keyword] if keyword == "enum" and isinstance(schema[keyword], list) else [schema[keyword]]
    return frozenset(json.dumps(value, sort_keys=True) for value in values)


def _keyword_text(
    old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str
) -> Iterator[SchemaChange]:
    """format, pattern and default: one more constraint or a different one narrows an input."""
    for keyword in ("format", "pattern", "default", "x-in", "x-name"):
        if old.get(keyword) == new.get(keyword):
            continue
        shown = f"{keyword} {_show(old.get(keyword))} -> {_show(new.get(keyword))}"
        if keyword in ("x-in", "x-name"):
            yield _change(
                "binding-changed", ChangeClass.DOCUMENTATION, pointer, f"{shown}: how the backend is called"
            )
        elif keyword == "default":
            if side == "input":
                yield _change(
                    "input-default-changed",
                    ChangeClass.BREAKING,
                    pointer,
                    f"{shown}: an omitted argument now means something else",
                )
            else:
                yield _change("documentation", ChangeClass.DOCUMENTATION, pointer, shown)
        elif side == "input":
            if keyword in new:
                yield _change(
                    "input-narrowed",
                    ChangeClass.BREAKING,
                    pointer,
                    f"{shown}: values valid before may be refused",
                )
            else:
                yield _change(
                    "input-widened", ChangeClass.ADDITIVE, pointer, f"{shown}: the constraint is gone"
                )
        elif keyword in old:
            yield _change(
                "output-retyped",
                ChangeClass.BREAKING,
                pointer,
                f"{shown}: results may no longer match the old {keyword}",
            )
        else:
            yield _change("output-narrowed", ChangeClass.ADDITIVE, pointer, shown)


def _bounds(old: dict[str, Any], new: dict[str, Any], pointer: str) -> Iterator[SchemaChange]:
    for keyword in (*_LOWER_BOUNDS, *_UPPER_BOUNDS):
        before, after = old.get(keyword), new.get(keyword)
        if before == after:
            continue
        lower = keyword in _LOWER_BOUNDS
        tighter = after is not None and (
            before is None
            or not isinstance(before, int | float)
            or not isinstance(after, int | float)
            or (after > before if lower else after < before)
        )
        shown = f"{keyword} {_show(before)} -> {_show(after)}"
        if tighter:
            yield _change(
                "input-narrowed",
                ChangeClass.BREAKING,
                pointer,
                f"{shown}: values valid before may be refused",
            )
        else:
            yield _change("input-widened", ChangeClass.ADDITIVE, pointer, shown)


def _properties(old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str) -> Iterator[SchemaChange]:
    before = old.get("properties") if isinstance(old.get("properties"), dict) else {}
    after = new.get("properties") if isinstance(new.get("properties"), dict) else {}
    required_before = set(old.get("required") or []) if isinstance(old.get("required"), list) else set()
    required_after = set(new.get("required") or []) if isinstance(new.get("required"), list) else set()
    assert isinstance(before, dict) and isinstance(after, dict)
    for name in before:
        where = f"{pointer}/properties/{_escape(name)}"
        if name not in after:
            kind = "input-property-removed" if side == "input" else "output-field-removed"
            yield _change(kind, ChangeClass.BREAKING, where, f"{name!r} was removed")
            continue
        yield from _diff(before[name], after[name], side, where)
    for name in after:
        if name in before:
            continue
        where = f"{pointer}/properties/{_escape(name)}"
        if side == "input" and name in required_after:
            yield _change(
                "input-required-added", ChangeClass.BREAKING, where, f"new required argument {name!r}"
            )
        elif side == "input":
            yield _change(
                "input-optional-added", ChangeClass.ADDITIVE, where, f"new optional argument {name!r}"
            )
        else:
            yield _change("output-field-added", ChangeClass.ADDITIVE, where, f"new result field {name!r}")
    for name in sorted(required_after - required_before):
        if name not in before:
            continue  # a new property: reported above
        where = f"{pointer}/properties/{_escape(name)}"
        if side == "input":
            yield _change(
                "input-required-added", ChangeClass.BREAKING, where, f"argument {name!r} is now required"
            )
        else:
            yield _change(
                "output-narrowed", ChangeClass.ADDITIVE, where, f"result field {name!r} is now always present"
            )
    for name in sorted(required_before - required_after):
        if name not in after:
            continue  # removed: reported above
        where = f"{pointer}/properties/{_escape(name)}"
        if side == "input":
            yield _change("input-widened", ChangeClass.ADDITIVE, where, f"argument {name!r} is now optional")
        else:
            yield _change(
                "output-field-optional",
                ChangeClass.BREAKING,
                where,
                f"result field {name!r} may now be absent",
            )


def _additional(old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str) -> Iterator[SchemaChange]:
    before, after = old.get("additionalProperties", True), new.get("additionalProperties", True)
    if before == after:
        return
    if isinstance(before, dict) or isinstance(after, dict):
        yield from _diff(before, after, side, f"{pointer}/additionalProperties")
        return
    if side == "input" and after is False:
        yield _change(
            "input-narrowed",
            ChangeClass.BREAKING,
            pointer,
            "additionalProperties: false: extra arguments are now refused",
        )
    elif side == "input":
        yield _change("input-widened", ChangeClass.ADDITIVE, pointer, "extra arguments are now accepted")
    elif after is False:
        yield _change("output-narrowed", ChangeClass.ADDITIVE, pointer, "results carry no undeclared fields")
    else:
        yield _change(
            "output-retyped", ChangeClass.BREAKING, pointer, "results may now carry undeclared fields"
        )


def _documentation(
    old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str
) -> Iterator[SchemaChange]:
    changed = sorted(k for k in _DOC_KEYWORDS if old.get(k) != new.get(k))
    if changed:
        yield _change(
            "documentation",
            ChangeClass.DOCUMENTATION,
            pointer,
            f"{side} schema text changed: {', '.join(changed)}",
        )


def _unknown_keywords(
    old: dict[str, Any], new: dict[str, Any], side: Side, pointer: str
) -> Iterator[SchemaChange]:
    known = _HANDLED | _DOC_KEYWORDS
    changed = sorted(k for k in set(old) | set(new) if k not in known and old.get(k) != new.get(k))
    if changed:
        yield _unproven(side, pointer, f"{', '.join(changed)} changed")


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _show(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, ensure_ascii=False)
