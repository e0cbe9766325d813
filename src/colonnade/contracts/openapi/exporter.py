"""A contract -> an OpenAPI 3.1 document that imports back into the same contract.

Arguments go where `colonnade.catalog.http_binding` sends them: path, query and header
properties become parameters, body properties one object body, a `raw-body` property the whole
body, under the endpoint's `body_media_type` (JSON, form or multipart; the object properties of
a form are declared `deepObject`, as the gateway sends them). Each operation's `llm` block is
written as `x-llm`. What OpenAPI has no field for travels in extensions the importer reads
back: `x-colonnade` (contract name, classification, backend timeout), `x-colonnade-name` (a
property name that differs from the wire name), `x-colonnade-secret` (the backend secret's
name) and `x-colonnade-mcp`. Recursive schemas keep their `$defs`, moved to
`components.schemas`; an endpoint without an `llm` block gets `x-llm: null` so that the import
does not seed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colonnade.contracts.model import AuthType, Backend, BackendAuth, BodyMediaType, Contract, Operation
from colonnade.contracts.openapi.importer import LLM_EXTENSION, MCP_EXTENSION
from colonnade.contracts.openapi.inputs import NAME_EXTENSION, property_name
from colonnade.contracts.openapi.metadata import CONTRACT_EXTENSION
from colonnade.contracts.openapi.naming import unique
from colonnade.contracts.openapi.openapi_errors import OpenApiError
from colonnade.contracts.openapi.schema_conversion import DEF_NAME_EXTENSION, map_subschemas
from colonnade.contracts.openapi.security import SECRET_EXTENSION
from colonnade.contracts.param_location import ParamLocation, ParamSpec, placements

__all__ = ["OPENAPI_VERSION", "export_openapi"]

OPENAPI_VERSION = "3.1.0"
_LOCAL_DEFS = "#/$defs/"
_COMPONENT_SCHEMAS = "#/components/schemas/"
_PARAMETER_LOCATIONS = (ParamLocation.PATH, ParamLocation.QUERY, ParamLocation.HEADER)
_SCHEME_NAMES = {
    AuthType.BEARER: "bearer_auth",
    AuthType.BASIC: "basic_auth",
    AuthType.API_KEY_HEADER: "api_key",
}


def _rewrite_refs(schema: Any, names: Mapping[str, str]) -> Any:
    """`#/$defs/Node` -> `#/components/schemas/<its component name>`, at any depth."""
    if not isinstance(schema, Mapping):
        return schema
    out = map_subschemas(schema, lambda sub: _rewrite_refs(sub, names))
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_LOCAL_DEFS) and ref[len(_LOCAL_DEFS) :] in names:
        out["$ref"] = _COMPONENT_SCHEMAS + names[ref[len(_LOCAL_DEFS) :]]
    return out


class _Components:
    """`components.schemas`, filled from the `$defs` of every exported schema."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}

    def lift(self, schema: Any) -> Any:
        """The schema without its `$defs`, which move to the components (renamed on a clash).

        A root that is one of its own defs (a recursive output) becomes a `$ref` to it, which
        imports back exactly as it was first imported.
        """
        if not isinstance(schema, Mapping) or not isinstance(schema.get("$defs"), Mapping):
            return schema
        defs: Mapping[str, Any] = schema["$defs"]
        same = {name: name for name in defs}
        if any(n in self.schemas and self.schemas[n] != _rewrite_refs(d, same) for n, d in defs.items()):
            names: dict[str, str] = {}
            for name in defs:
                names[name] = unique(name, {*self.schemas, *names.values()}) if name in self.schemas else name
        else:
            names = same
        for name, sub in defs.items():
            lifted = _rewrite_refs(sub, names)
            if names[name] != name and isinstance(lifted, dict):
                lifted[DEF_NAME_EXTENSION] = name
            self.schemas[names[name]] = lifted
        root = _rewrite_refs({k: v for k, v in schema.items() if k != "$defs"}, names)
        for name in defs:
            if self.schemas[names[name]] == root:
                return {"$ref": _COMPONENT_SCHEMAS + names[name]}
        return root


def _clean(schema: Any) -> Any:
    """A property schema without the contract's location keywords."""
    if not isinstance(schema, Mapping):
        return schema
    return {k: v for k, v in schema.items() if k not in ("x-in", "x-name")}


def _named(schema: Any, spec: ParamSpec, wire_name: str) -> Any:
    """Record the property name when importing the wire name would not give it back."""
    if property_name(wire_name, spec.location) == spec.name or not isinstance(schema, Mapping):
        return schema
    return {**schema, NAME_EXTENSION: spec.name}


def _parameter(operation: Operation, spec: ParamSpec, schema: Any, required: bool) -> dict[str, Any]:
    wire = spec.wire_name
    if spec.location is ParamLocation.PATH and f"{{{spec.name}}}" in operation.endpoint.path:
        wire = spec.name
    param: dict[str, Any] = {"name": wire, "in": spec.location.value}
    if required or spec.location is ParamLocation.PATH:
        param["required"] = True
    if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
        param["description"] = schema["description"]
    param["schema"] = schema
    if property_name(wire, spec.location) != spec.name:
        param[NAME_EXTENSION] = spec.name
    return param


def _request_body(
    operation: Operation, body: dict[str, Any], required: list[str], raw: tuple[ParamSpec, Any, bool] | None
) -> dict[str, Any] | None:
    media = operation.endpoint.effective_body_media_type.value
    if raw is not None and body:
        raise OpenApiError(
            f"{operation.method} {operation.endpoint.path} has both `body` and `raw-body` properties",
            hint="a request has one body: keep either one raw-body property or body properties",
        )
    if raw is not None:
        spec, schema, raw_required = raw
        request: dict[str, Any] = {"required": raw_required}
        request["content"] = {media: {"schema": schema}}
        if spec.name != "body":
            request[NAME_EXTENSION] = spec.name
        return request
    if not body:
        return None
    obj: dict[str, Any] = {"type": "object", "properties": body}
    if required:
        obj["required"] = required
    if operation.endpoint.effective_input_schema().get("additionalProperties") is False:
        obj["additionalProperties"] = False
    content: dict[str, Any] = {"schema": obj}
    objects = [name for name, prop in body.items() if _is_object(prop)]
    if media == BodyMediaType.FORM.value and objects:
        content["encoding"] = {name: {"style": "deepObject", "explode": True} for name in objects}
    return {"required": bool(required), "content": {media: content}}


def _is_object(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "object"


def _arguments(operation: Operation, components: _Components) -> dict[str, Any]:
    """`parameters` and `requestBody` of an operation, from its binding."""
    schema = components.lift(operation.endpoint.effective_input_schema())
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parameters: list[dict[str, Any]] = []
    body: dict[str, Any] = {}
    body_required: list[str] = []
    raw: tuple[ParamSpec, Any, bool] | None = None
    for spec in placements(operation):
        prop = _clean(properties.get(spec.name, {}))
        is_required = spec.name in required
        if spec.location in _PARAMETER_LOCATIONS:
            parameters.append(_parameter(operation, spec, prop, is_required))
        elif spec.location is ParamLocation.BODY:
            body[spec.wire_name] = _named(prop, spec, spec.wire_name)
            if is_required:
                body_required.append(spec.wire_name)
        else:
            raw = (spec, prop, is_required)
    out: dict[str, Any] = {}
    if parameters:
        out["parameters"] = parameters
    request = _request_body(operation, body, body_required, raw)
    if request is not None:
        out["requestBody"] = request
    return out


def _operation(operation: Operation, components: _Components) -> dict[str, Any]:
    endpoint = operation.endpoint
    op: dict[str, Any] = {"operationId": operation.name}
    if endpoint.llm is not None:
        op["summary"] = endpoint.llm.summary
    if endpoint.description:
        op["description"] = endpoint.description
    if endpoint.tags:
        op["tags"] = list(endpoint.tags)
    op.update(_arguments(operation, components))
    if endpoint.backend_url is not None:
        op["servers"] = [{"url": endpoint.backend_url}]
    success: dict[str, Any] = {"description": "Success"}
    if endpoint.output_schema is not None:
        success["content"] = {"application/json": {"schema": components.lift(endpoint.output_schema)}}
    op["responses"] = {"200": success}
    if endpoint.llm is not None:
        op[LLM_EXTENSION] = {**endpoint.llm.model_dump(mode="json"), "tool_name": operation.tool_name}
    else:
        op[LLM_EXTENSION] = None
    if not endpoint.mcp:
        op[MCP_EXTENSION] = False
    return op


def _security_scheme(backend: Backend) -> tuple[str, dict[str, Any]] | None:
    auth = backend.auth
    if not isinstance(auth, BackendAuth):  # forward and exchange are the gateway's, not the API's
        return None
    scheme: dict[str, Any]
    if auth.type is AuthType.BEARER:
        scheme = {"type": "http", "scheme": "bearer"}
    elif auth.type is AuthType.BASIC:
        scheme = {"type": "http", "scheme": "basic"}
    else:
        scheme = {"type": "apiKey", "in": "header", "name": auth.header or "Authorization"}
    scheme[SECRET_EXTENSION] = auth.secret
    return _SCHEME_NAMES[auth.type], scheme


def export_openapi(contract: Contract) -> dict[str, Any]:
    """The contract as an OpenAPI 3.1 document (plain data, ready to dump as YAML or JSON)."""
    components = _Components()
    paths: dict[str, dict[str, Any]] = {}
    for operation in contract.operations():
        item = paths.setdefault(operation.endpoint.path, {})
        method = operation.method.lower()
        if method in item:
            raise OpenApiError(
                f"{operation.method} {operation.endpoint.path} appears twice in the contract",
                pointer=operation.pointer,
                hint="run `colonnade contract validate` (UAC013) and keep one endpoint per path + method",
            )
        item[method] = _operation(operation, components)
    extension: dict[str, Any] = {"name": contract.name}
    if contract.classification is not None:
        extension["classification"] = contract.classification.value
    if contract.backend.timeout_ms is not None:
        extension["timeout_ms"] = contract.backend.timeout_ms
    doc: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": contract.display_name,
            "version": contract.version,
            "description": contract.description,
        },
        CONTRACT_EXTENSION: extension,
        "servers": [{"url": contract.backend.base_url}],
    }
    security = _security_scheme(contract.backend)
    if security is not None:
        doc["security"] = [{security[0]: []}]
    doc["paths"] = paths
    schemes = {security[0]: security[1]} if security is not None else {}
    comps: dict[str, Any] = {}
    if components.schemas:
        comps["schemas"] = components.schemas
    if schemes:
        comps["securitySchemes"] = schemes
    if comps:
        doc["components"] = comps
    return doc
