"""Small builders of the core tools' JSON Schemas, so each definition reads as its fields."""

from __future__ import annotations

from typing import Any

__all__ = ["ANY_OBJECT", "array", "boolean", "integer", "obj", "output", "string"]

ANY_OBJECT: dict[str, Any] = {"type": "object"}


def obj(
    required: tuple[str, ...] = (), *, closed: bool = True, **properties: dict[str, Any]
) -> dict[str, Any]:
    """An object schema; `closed` refuses arguments it does not name (for inputs)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def string(description: str = "", **keywords: Any) -> dict[str, Any]:
    return {"type": "string", **({"description": description} if description else {}), **keywords}


def integer(description: str = "", **keywords: Any) -> dict[str, Any]:
    return {"type": "integer", **({"description": description} if description else {}), **keywords}


def boolean(description: str = "") -> dict[str, Any]:
    return {"type": "boolean", **({"description": description} if description else {})}


def array(items: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"type": "array", "items": items, **({"description": description} if description else {})}


def output(required: tuple[str, ...] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    """An output schema: the named fields, more allowed (a newer gateway may add some)."""
    return obj(required, closed=False, **properties)
