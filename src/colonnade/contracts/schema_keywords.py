"""The keywords of an endpoint's JSON Schemas: which are null and which JSON Schema does not know.

JSON Schema ignores a keyword it does not know, so a slip passes every meta-schema check and the
tool still ships it to clients. The common YAML slip is a comma inside a flow mapping:
`{type: string, description: Customer id, e.g. C-1002.}` reads as a description "Customer id"
plus a keyword `e.g. C-1002.` whose value is null. The walk follows only the places that hold
subschemas, so property names, enum values, defaults and examples are data, never keywords.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["KEYWORDS", "KeywordProblem", "keyword_problems"]

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_OTHER_KEYWORDS = frozenset(
    {
        # core
        "$id", "$schema", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment",
        # validation
        "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
        "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains",
        "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
        # meta-data, format, content
        "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "format",
        "contentEncoding", "contentMediaType",
        # kept by the 2020-12 meta-schema for older schemas
        "dependencies",
    }
)  # fmt: skip
KEYWORDS = _SCHEMA_MAPS | _SCHEMA_LISTS | _SCHEMA_VALUES | _OTHER_KEYWORDS
"""Every keyword of JSON Schema 2020-12 (all vocabularies of the meta-schema)."""
_NULL_ALLOWED = frozenset({"const", "default"})  # keywords whose value is data, and null is data


@dataclass(frozen=True, slots=True)
class KeywordProblem:
    """A keyword at `tokens` (the path to the keyword itself) whose value is null or that is unknown."""

    tokens: list[object]
    keyword: str
    kind: Literal["null", "unknown"]
    after: tuple[str, str] | None = None
    """The text keyword just before it (name, value): what a comma in YAML may have cut short."""


def keyword_problems(schema: Any, tokens: list[object]) -> Iterator[KeywordProblem]:
    """Null-valued and unknown keywords of `schema` and its subschemas, in document order.

    An `x-` keyword is an extension (Colonnade's own `x-in` and `x-name` among them) and never
    unknown; a null keyword is reported once, as null, even when it is unknown too.
    """
    if not isinstance(schema, dict):
        return
    text: tuple[str, str] | None = None
    for key, value in schema.items():
        keyword = str(key)
        here = [*tokens, keyword]
        if value is None and keyword not in _NULL_ALLOWED:
            yield KeywordProblem(here, keyword, "null", text)
        elif keyword not in KEYWORDS and not keyword.startswith("x-"):
            yield KeywordProblem(here, keyword, "unknown")
        elif keyword in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from keyword_problems(sub, [*here, name])
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from keyword_problems(sub, [*here, index])
        elif keyword in _SCHEMA_VALUES:
            yield from keyword_problems(value, here)
        text = (keyword, value) if isinstance(value, str) else None
