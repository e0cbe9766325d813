"""UAC001 checks of an endpoint's own schemas: valid JSON Schema, and every argument bound to the request.

The contract schema only says `input_schema` is a mapping. These checks make sure it is a real
JSON Schema 2020-12 of an object, and that `catalog/http_binding.py` can place every argument on
the HTTP request: `x-in` values are known, each `{param}` of the path has a required property,
a property sent to the path has a `{param}` to fill, and a raw body is the only body (and an
object when the body is form fields or multipart parts: `body_media_type`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry

from colonnade.contracts.findings import Finding, Severity
from colonnade.contracts.model import BodyMediaType, path_parameters
from colonnade.contracts.param_location import BODYLESS_METHODS, ParamLocation
from colonnade.contracts.violations import describe_value, dotted, pointer_of, shorten

__all__ = ["PARAM_LOCATIONS", "EndpointRef", "binding_problems", "schema_problems"]

PARAM_LOCATIONS = tuple(location.value for location in ParamLocation)
_FIELD_BODIES = (BodyMediaType.FORM.value, BodyMediaType.MULTIPART.value)
_META_VALIDATOR = Draft202012Validator(
    Draft202012Validator.META_SCHEMA,
    format_checker=Draft202012Validator.FORMAT_CHECKER,
    registry=Registry(),
)


@dataclass(frozen=True, slots=True)
class EndpointRef:
    """What the checks need to know of an endpoint: where it is, its route, how it reads."""

    pointer: str
    path: str | None
    methods: tuple[str, ...]
    label: str
    body_media_type: object = None


def _error(pointer: str, message: str, fix: str) -> Finding:
    return Finding("UAC001", Severity.ERROR, pointer, message, fix)


def schema_problems(schema: Any, tokens: list[object]) -> list[Finding]:
    """Why the schema at `tokens` is not valid JSON Schema 2020-12 (empty when it is, or absent)."""
    if not isinstance(schema, dict):
        return []
    return [
        _error(
            pointer_of([*tokens, *error.absolute_path]),
            f"{dotted(tokens)} is not a valid JSON Schema 2020-12: {shorten(error.message)}",
            "fix the schema (see https://json-schema.org/draft/2020-12)",
        )
        for error in _META_VALIDATOR.iter_errors(schema)
    ]


def binding_problems(endpoint: EndpointRef, schema: dict[str, Any]) -> Iterator[Finding]:
    """A valid input schema that still cannot become an HTTP request (or is not an object)."""
    base = f"{endpoint.pointer}/input_schema"
    if schema.get("type") != "object":
        yield _error(
            f"{base}/type",
            f"input_schema of {endpoint.label} has type {describe_value(schema.get('type'))}; "
            "a tool's arguments are always an object",
            "set `type: object` and describe each argument under `properties`",
        )
    properties = schema.get("properties", {})
    if isinstance(properties, dict):
        yield from _Placement(endpoint, schema, properties).problems()


class _Placement:
    """Walks the properties once, noting where each argument goes and what is wrong with it."""

    def __init__(self, endpoint: EndpointRef, schema: dict[str, Any], properties: dict[str, Any]) -> None:
        self.endpoint = endpoint
        self.schema = schema
        self.properties = properties
        self.base = f"{endpoint.pointer}/input_schema"
        self.placeholders = path_parameters(endpoint.path or "")
        self.in_path: dict[str, str] = {}
        self.raw_bodies: list[str] = []
        self.body_args: list[str] = []

    def problems(self) -> Iterator[Finding]:
        for name, prop in self.properties.items():
            yield from self._place(name, prop if isinstance(prop, dict) else {})
        yield from self._unfilled_placeholders()
        yield from self._body_conflicts()

    def _place(self, name: str, prop: dict[str, Any]) -> Iterator[Finding]:
        where = self.base + pointer_of(["properties", name])
        declared = prop.get("x-in")
        wire = prop.get("x-name", name)
        if not isinstance(wire, str):
            yield _error(
                f"{where}/x-name",
                f"x-name of argument '{name}' is {describe_value(wire)}; it must be a string",
                "set x-name to the parameter's name on the wire, e.g. X-Request-Id",
            )
            wire = name
        if declared is not None and declared not in PARAM_LOCATIONS:
            yield _error(
                f"{where}/x-in",
                f"x-in of argument '{name}' is {describe_value(declared)}; "
                f"expected one of: {', '.join(PARAM_LOCATIONS)}",
                f"use one of: {', '.join(PARAM_LOCATIONS)}",
            )
            return
        location = declared or ("path" if name in self.placeholders else None)
        if location == "path":
            self.in_path[wire] = name
            if wire not in self.placeholders:
                yield _error(
                    f"{where}/x-in",
                    f"argument '{name}' goes to the path, but path {self.endpoint.path!r} has no {{{wire}}}",
                    f"add {{{wire}}} to the path, or send the argument elsewhere (x-in: query/header/body)",
                )
        elif location == "raw-body":
            self.raw_bodies.append(name)
        elif location == "body" or (location is None and self._has_body()):
            self.body_args.append(name)

    def _has_body(self) -> bool:
        return any(method not in BODYLESS_METHODS for method in self.endpoint.methods)

    def _unfilled_placeholders(self) -> Iterator[Finding]:
        required = self.schema.get("required")
        required = required if isinstance(required, list) else []
        for param in dict.fromkeys(self.placeholders):
            name = self.in_path.get(param)
            if name is None:
                yield _error(
                    f"{self.base}/properties",
                    f"path parameter {{{param}}} of {self.endpoint.label} has no property in input_schema",
                    f"add a property '{param}' (e.g. `{param}: {{type: string}}`) and list it in `required`",
                )
            elif name not in required:
                yield _error(
                    f"{self.base}/required",
                    f"path parameter {{{param}}} of {self.endpoint.label} is not required in input_schema; "
                    "a request without it has no URL",
                    f"add '{name}' to input_schema.required",
                )

    def _body_conflicts(self) -> Iterator[Finding]:
        properties = f"{self.base}/properties"
        raw, label = self.raw_bodies, self.endpoint.label
        if len(raw) > 1:
            yield _error(
                properties + pointer_of([raw[1], "x-in"]),
                f"arguments {', '.join(repr(n) for n in raw)} of {label} are all the raw body; "
                "a request has one body",
                "keep x-in: raw-body on one argument",
            )
        if raw and self.body_args:
            yield _error(
                properties + pointer_of([raw[0], "x-in"]),
                f"argument '{raw[0]}' of {label} is the whole raw body, but "
                f"{', '.join(repr(n) for n in self.body_args)} also go(es) to the JSON body",
                "move the other arguments to the path, query or headers (x-in), or drop x-in: raw-body",
            )
        media = self.endpoint.body_media_type
        prop = self.properties.get(raw[0]) if raw else None
        if media in _FIELD_BODIES and isinstance(prop, dict) and prop.get("type") != "object":
            yield _error(
                properties + pointer_of([raw[0], "type"]),
                f"argument '{raw[0]}' of {label} is the whole {media} body, which is a set of fields; "
                f"its type is {describe_value(prop.get('type'))}",
                "give it `type: object` (its members are the fields), or drop body_media_type to send JSON",
            )
