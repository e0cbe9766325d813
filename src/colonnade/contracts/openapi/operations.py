"""One OpenAPI operation -> the schemas and fields of one UAC endpoint.

Problems confined to one operation (an XML or binary body, a required cookie, a malformed
parameter) raise `Unmappable` with the reason, so the importer can skip that operation and
say why; losses worth knowing that still allow the import are returned as notes. A JSON body is
preferred; else a form (`application/x-www-form-urlencoded`, then `multipart/form-data`) becomes
the endpoint's `body_media_type`, a multipart file (`format: binary`, or a `contentMediaType`
without `contentEncoding`) a base64 string property (`contentEncoding: base64`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from colonnade.contracts.model import BASE_URL
from colonnade.contracts.openapi.inputs import NAME_EXTENSION, TEMPLATE_PARAM, InputField, assemble_input
from colonnade.contracts.openapi.media import (
    FORM_MEDIA_TYPES,
    base_media,
    form_media,
    json_media,
    media_types,
)
from colonnade.contracts.openapi.refs import join_pointer
from colonnade.contracts.openapi.schema_conversion import SchemaConverter, SchemaScope, without_flagged
from colonnade.contracts.openapi.security import Credentials
from colonnade.contracts.output_shape import OutputShape, output_shape
from colonnade.contracts.param_location import DEFAULT_FILE_MEDIA_TYPE, ParamLocation

__all__ = ["EndpointDraft", "Unmappable", "draft_endpoint"]

_PARAM_LOCATIONS = {"path", "query", "header", "cookie"}
_RESERVED_HEADERS = {"accept", "content-type", "authorization"}
_RESERVED_TEXT = "Accept, Content-Type and Authorization (set auth in backend.auth)"
_SUCCESS = re.compile(r"^2(\d\d|XX)$")
_FLATTENABLE = frozenset({"type", "properties", "required", "title", "description", "examples", "deprecated"})
_CLOSED = frozenset({"additionalProperties", "unevaluatedProperties"})
_NO_SCHEMA: dict[str, Any] = {"type": "string"}
_ABSOLUTE = re.compile(BASE_URL)


class Unmappable(Exception):
    """The operation cannot become an endpoint; the message says why."""


@dataclass
class EndpointDraft:
    """What the importer needs to write one endpoint, before names and `llm` are settled."""

    path: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    backend_url: str | None = None
    body_media_type: str | None = None
    """A form media type when the body is form fields or multipart parts; None for JSON."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _preferred(owner: object) -> str | None:
    """The property name the exporter recorded for a parameter or body field, if any."""
    name = _mapping(owner).get(NAME_EXTENSION)
    return name if isinstance(name, str) else None


@dataclass
class _Context:
    converter: SchemaConverter
    scope: SchemaScope
    notes: list[str]
    credentials: Credentials | None = None
    body_media_type: str | None = None


def _parameters(
    ctx: _Context, path_item: Mapping[str, Any], operation: Mapping[str, Any], item_ptr: str, op_ptr: str
) -> list[tuple[Mapping[str, Any], str]]:
    """Path-level then operation-level parameters, the latter overriding by (name, in)."""
    merged: dict[tuple[str, str], tuple[Mapping[str, Any], str]] = {}
    for owner, owner_ptr in ((path_item, item_ptr), (operation, op_ptr)):
        listed = owner.get("parameters", [])
        if not isinstance(listed, list):
            raise Unmappable(f"parameters at {owner_ptr}/parameters is not a list")
        for index, raw in enumerate(listed):
            ptr = join_pointer(owner_ptr, "parameters", index)
            param, _ = ctx.converter.resolver.follow(raw, ptr)
            name, where = _mapping(param).get("name"), _mapping(param).get("in")
            if not isinstance(name, str) or where not in _PARAM_LOCATIONS:
                raise Unmappable(
                    f"parameter at {ptr} needs a string `name` and an `in` of path|query|header|cookie"
                )
            merged[(name, str(where))] = (param, ptr)
    return list(merged.values())


def _parameter_schema(ctx: _Context, param: Mapping[str, Any], ptr: str) -> Any:
    if "schema" in param:
        schema = ctx.scope.convert(param["schema"], join_pointer(ptr, "schema"))
    elif isinstance(param.get("content"), Mapping) and param["content"]:
        media, media_obj = next(iter(param["content"].items()))
        raw = _mapping(media_obj).get("schema", {})
        schema = ctx.scope.convert(raw, join_pointer(ptr, "content", media, "schema"))
    else:
        schema = dict(_NO_SCHEMA)
    if not isinstance(schema, dict):
        return schema
    if isinstance(param.get("description"), str) and "description" not in schema:
        schema["description"] = param["description"]
    if param.get("deprecated") is True:
        schema["deprecated"] = True
    if "example" in param and "examples" not in schema:
        schema["examples"] = [param["example"]]
    return schema


def _parameter_fields(
    ctx: _Context, path: str, params: list[tuple[Mapping[str, Any], str]]
) -> list[InputField]:
    in_template = TEMPLATE_PARAM.findall(path)
    fields: list[InputField] = []
    declared_path: set[str] = set()
    for param, ptr in params:
        name, where = str(param["name"]), str(param["in"])
        if where == "cookie":
            if param.get("required") is True:
                raise Unmappable(f"required cookie parameter {name!r}: contracts cannot send cookies")
            ctx.notes.append(f"optional cookie parameter {name!r} not imported")
            continue
        if where == "header" and name.lower() in _RESERVED_HEADERS:
            ctx.notes.append(f"header parameter {name!r} ignored: OpenAPI reserves {_RESERVED_TEXT}")
            continue
        owner = ctx.credentials.carries_credential(where, name) if ctx.credentials is not None else None
        if owner is not None:
            ctx.notes.append(f"{where} parameter {name!r} is {owner}: not an argument, backend.auth sends it")
            continue
        if where == "path" and name not in in_template:
            ctx.notes.append(f"path parameter {name!r} is not in the path template; not imported")
            continue
        if where == "path":
            declared_path.add(name)
        location = ParamLocation(where)
        required = where == "path" or param.get("required") is True
        schema = _parameter_schema(ctx, param, ptr)
        fields.append(InputField(name, location, schema, required, _preferred(param)))
    for name in in_template:
        if name not in declared_path:
            ctx.notes.append(f"path parameter {{{name}}} is not declared; imported as a string")
            fields.append(InputField(name, ParamLocation.PATH, dict(_NO_SCHEMA), True))
    return fields


def _object_fields(schema: Any, *, part: bool = False) -> tuple[dict[str, Any], list[str]] | None:
    """Properties and required names of a plain JSON object schema, or `None` when it is not one.

    A `part` of an `allOf` may have no properties (e.g. it only lists `required`).
    """
    if not isinstance(schema, Mapping):
        return None
    if "allOf" in schema:
        return _merged_all_of(schema)
    for key, value in schema.items():
        if key in _CLOSED and value is not False:
            return None
        if key not in _FLATTENABLE and key not in _CLOSED and not key.startswith("x-"):
            return None
    if schema.get("type", "object") != "object":
        return None
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping) or not (properties or part):
        return None
    required = schema.get("required", [])
    return dict(properties), [r for r in required if isinstance(r, str)]


def _merged_all_of(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """An `allOf` of plain objects is one object: properties joined (a property in two parts gets both)."""
    parts = schema["allOf"]
    if not isinstance(parts, list):
        return None
    rest = {k: v for k, v in schema.items() if k != "allOf"}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for piece in [*parts, rest]:
        flat = _object_fields(piece, part=True)
        if flat is None:
            return None
        for name, sub in flat[0].items():
            if name in properties and properties[name] != sub:
                properties[name] = {"allOf": [properties[name], sub]}
            else:
                properties[name] = sub
        required.extend(r for r in flat[1] if r not in required)
    if not properties:
        return None
    return properties, [r for r in required if r in properties]


def _is_empty_object(schema: object) -> bool:
    """A body schema that can carry nothing: an object with no properties (Stripe's DELETE bodies)."""
    if not isinstance(schema, Mapping) or "$ref" in schema:
        return False
    closed = {"type", "properties", "description", "title"}
    return schema.get("type") == "object" and not schema.get("properties") and set(schema) <= closed


def _body_fields(ctx: _Context, operation: Mapping[str, Any], op_ptr: str) -> list[InputField]:
    if "requestBody" not in operation:
        return []
    body_ptr = join_pointer(op_ptr, "requestBody")
    body, body_ptr = ctx.converter.resolver.follow(operation["requestBody"], body_ptr)
    content = _mapping(_mapping(body).get("content"))
    if not content:
        return []
    picked = json_media(content) or form_media(content)
    if picked is None:
        kinds = ", ".join(media_types(content))
        if all(_is_empty_object(_mapping(media_obj).get("schema")) for media_obj in content.values()):
            ctx.notes.append(f"request body ({kinds}) declares no fields; not imported")
            return []
        raise Unmappable(
            f"request body is {kinds}; only JSON, form (application/x-www-form-urlencoded) and "
            "multipart/form-data bodies can be mapped (binary and XML bodies are not supported)"
        )
    media, media_obj = picked
    form = base_media(media) if base_media(media) in FORM_MEDIA_TYPES else None
    others = [m for m in media_types(content) if m != media]
    raw = _mapping(media_obj).get("schema", {})
    if form is not None and _is_empty_object(raw):
        ctx.notes.append(f"request body ({media}) declares no fields; not imported")
        return []
    if others:
        ctx.notes.append(f"request body also accepts {', '.join(others)}; only {media} imported")
    converted = ctx.scope.convert(raw, join_pointer(body_ptr, "content", media, "schema"))
    schema = without_flagged(converted, "readOnly")
    body_required = _mapping(body).get("required") is True
    ctx.body_media_type = form
    flat = _object_fields(schema)
    if flat is None:
        if form is not None and (not isinstance(schema, Mapping) or schema.get("type") != "object"):
            raise Unmappable(f"request body ({media}) is not an object of fields")
        return [InputField("body", ParamLocation.RAW_BODY, schema, body_required, _preferred(body))]
    properties, required = flat
    encoding = _mapping(_mapping(media_obj).get("encoding"))
    if form == FORM_MEDIA_TYPES[1]:
        properties = {name: _as_file(sub, _mapping(encoding.get(name))) for name, sub in properties.items()}
    return [
        InputField(name, ParamLocation.BODY, sub, name in required, _preferred(sub))
        for name, sub in properties.items()
    ]


def _as_file(schema: Any, encoding: Mapping[str, Any]) -> Any:
    """A multipart file property as the gateway takes it: base64 text of the file's bytes.

    OpenAPI says "binary" with `format: binary` (3.0) or a `contentMediaType` without
    `contentEncoding` (3.1); the part's media type comes from the schema, else the encoding's
    `contentType`, else application/octet-stream. An array of files keeps its array.
    """
    if not isinstance(schema, Mapping):
        return schema
    if schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        return {**schema, "items": _as_file(schema["items"], encoding)}
    binary = schema.get("format") == "binary" or (
        "contentMediaType" in schema and "contentEncoding" not in schema
    )
    if schema.get("type") != "string" or not binary:
        return schema
    declared = encoding.get("contentType")
    media = schema.get("contentMediaType") or (
        declared.split(",")[0].strip() if isinstance(declared, str) and declared.strip() else None
    )
    file = {k: v for k, v in schema.items() if k != "format"}
    return {**file, "contentEncoding": "base64", "contentMediaType": media or DEFAULT_FILE_MEDIA_TYPE}


def _as_mapping(schema: Any) -> dict[str, Any]:
    """Boolean schemas as objects: `true` accepts anything, `false` nothing."""
    if isinstance(schema, dict):
        return schema
    return {} if schema is not False else {"not": {}}


def _output_schema(ctx: _Context, operation: Mapping[str, Any], op_ptr: str) -> dict[str, Any] | None:
    """The schema of the first 2xx response with JSON content, with its own `$defs`."""
    responses = _mapping(operation.get("responses"))
    text_only: list[str] = []
    for code, raw in responses.items():
        if not _SUCCESS.match(str(code)):
            continue
        response, ptr = ctx.converter.resolver.follow(raw, join_pointer(op_ptr, "responses", code))
        content = _mapping(_mapping(response).get("content"))
        picked = json_media(content)
        if picked is None:
            text_only.extend(f"{code} {m}" for m in media_types(content))
            continue
        media, media_obj = picked
        if "schema" not in _mapping(media_obj):
            return None
        scope = ctx.converter.scope()
        converted = scope.convert(media_obj["schema"], join_pointer(ptr, "content", media, "schema"))
        schema = _as_mapping(without_flagged(converted, "writeOnly"))
        defs = {name: without_flagged(sub, "writeOnly") for name, sub in scope.defs().items()}
        if defs:
            schema["$defs"] = {**_mapping(schema.get("$defs")), **defs}
        return schema
    if text_only:
        ctx.notes.append(f"success response is not JSON ({', '.join(text_only)}); no output_schema")
    return None


def draft_endpoint(
    converter: SchemaConverter,
    *,
    path: str,
    path_item: Mapping[str, Any],
    operation: Mapping[str, Any],
    item_pointer: str,
    op_pointer: str,
    credentials: Credentials | None = None,
) -> EndpointDraft:
    """Input and output schemas of one operation; raises `Unmappable` when it cannot be an endpoint.

    Parameters that carry a credential (see `security.py`) never become arguments.
    """
    ctx = _Context(converter, converter.scope(), [], credentials)
    params = _parameters(ctx, path_item, operation, item_pointer, op_pointer)
    fields = _parameter_fields(ctx, path, params) + _body_fields(ctx, operation, op_pointer)
    defs = {name: without_flagged(schema, "readOnly") for name, schema in ctx.scope.defs().items()}
    input_schema, renamed_path = assemble_input(path, fields, defs)
    output_schema = _output_schema(ctx, operation, op_pointer)
    _note_output_shape(ctx, output_schema)
    backend_url = _own_server(ctx, operation, path_item)
    body_media_type = ctx.body_media_type
    return EndpointDraft(renamed_path, input_schema, output_schema, ctx.notes, backend_url, body_media_type)


def _note_output_shape(ctx: _Context, schema: dict[str, Any] | None) -> None:
    """MCP results are objects (see `contracts/output_shape.py`): say what that means for this one."""
    if schema is None:
        return
    shape = output_shape(schema)
    if shape is OutputShape.OTHER:
        kind = schema.get("type", "not an object")
        ctx.notes.append(f'the response is {_kind_text(kind)}: MCP clients get it as {{"result": ...}}')
    elif shape is OutputShape.MIXED:
        ctx.notes.append(
            "the response schema admits objects and other values alike (UAC021): the tool is listed "
            "without an output schema; give it `type: object` if the response is always an object"
        )


def _kind_text(kind: object) -> str:
    if isinstance(kind, list):
        return " or ".join(map(str, kind))
    return f"an {kind}" if str(kind)[:1] in "aeiou" else f"a {kind}"


def _own_server(ctx: _Context, operation: Mapping[str, Any], path_item: Mapping[str, Any]) -> str | None:
    """The endpoint's `backend_url`: the operation's (else the path item's) first absolute server URL."""
    for owner in (operation, path_item):
        servers = owner.get("servers")
        if not isinstance(servers, list) or not servers:
            continue
        url = _mapping(servers[0]).get("url")
        if isinstance(url, str) and _ABSOLUTE.match(url) and not TEMPLATE_PARAM.search(url):
            if len(servers) > 1:
                ctx.notes.append(f"{len(servers)} servers declared; backend_url is the first, {url}")
            return url.rstrip("/")
        ctx.notes.append(f"server {url!r} is not an absolute URL without variables; backend.base_url is used")
        return None
    return None
