"""Export to OpenAPI 3.1 and the round trip import(export(c)) ~ c."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colonnade.catalog.http_binding import binding_for
from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract, Operation
from colonnade.contracts.openapi import OpenApiError, export_openapi, import_openapi
from colonnade.contracts.validate import validate_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "contracts").glob("*.yaml"))
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi"
RELATIVE_SERVERS = {"petstore_public.yaml": "https://petstore3.example.com/api/v3"}  # like the public one
ADR_EXAMPLE = ROOT / "tests" / "fixtures" / "contracts" / "adr_customer.json"
LOCATION_KEYWORDS = ("x-in", "x-name")
STRING = {"type": "string"}
PDF_FILE = {"type": "string", "contentEncoding": "base64", "contentMediaType": "application/pdf"}


def _llm(tool_name: str, side_effects: str = "read", **extra: Any) -> dict[str, Any]:
    destructive = side_effects == "destructive"
    return {
        "summary": f"Run {tool_name}.",
        "intent": f"Use when {tool_name} is what the user asked for.",
        "tool_name": tool_name,
        "side_effects": side_effects,
        "safe_for_agents": not destructive,
        "requires_human_approval": destructive,
        "examples": [],
        **extra,
    }


NODE = {
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
    },
    "required": ["label"],
}

BUILT: dict[str, dict[str, Any]] = {
    "locations": {
        "name": "locations",
        "version": "0.3.0-beta.1",
        "tenant": "lab",
        "display_name": "Every argument location",
        "description": "Path, query, header, body, raw body, renamed properties, several methods.",
        "status": "published",
        "classification": "restricted",
        "backend": {
            "base_url": "http://127.0.0.1:8080/base",
            "auth": {"type": "api_key_header", "secret": "LAB_KEY", "header": "X-Api-Key"},
            "timeout_ms": 1500,
        },
        "endpoints": [
            {
                "path": "/things/{thing_id}",
                "methods": ["GET", "DELETE"],
                "operation_id": "thing",
                "tags": ["things"],
                "llm": _llm("thing"),
            },
            {
                "path": "/things/{thing_id}/parts",
                "methods": ["PUT"],
                "operation_id": "replace_parts",
                "description": "Replaces the parts; the body is a bare JSON array.",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "thing_id": {"type": "integer", "minimum": 1},
                        "trace": {"x-in": "header", "x-name": "X-Trace-Id", "type": "string"},
                        "dry_run": {"x-in": "query", "x-name": "dry-run", "type": "boolean"},
                        "parts": {"x-in": "raw-body", "type": "array", "items": {"type": "string"}},
                    },
                    "required": ["thing_id", "parts"],
                    "additionalProperties": False,
                },
                "output_schema": {"type": "object", "properties": {"count": {"type": "integer"}}},
                "llm": _llm("replace_parts", "write"),
            },
            {
                "path": "/things",
                "methods": ["POST"],
                "operation_id": "create_thing",
                "mcp": False,
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "id": {"x-in": "query", "type": "string"},
                        "body_id": {"x-in": "body", "x-name": "id", "type": "string"},
                        "name": {"type": "string", "description": "Display name."},
                        "tree": {"$ref": "#/$defs/Node"},
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                    "$defs": {"Node": NODE},
                },
                "output_schema": {
                    "type": "object",
                    "properties": {"root": {"$ref": "#/$defs/Node"}},
                    "$defs": {"Node": NODE},
                },
            },
        ],
    },
    "forms": {
        "name": "forms",
        "version": "1.0.0",
        "tenant": "lab",
        "display_name": "Form and multipart bodies",
        "description": "Urlencoded fields, a urlencoded raw body, multipart text, JSON and file parts.",
        "status": "published",
        "backend": {"base_url": "https://forms.example.com"},
        "endpoints": [
            {
                "path": "/2010-04-01/Accounts/{account}/Messages.json",
                "methods": ["POST"],
                "operation_id": "create_message",
                "body_media_type": "application/x-www-form-urlencoded",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "account": {"type": "string"},
                        "to": {"x-name": "To", "type": "string"},
                        "events": {"x-name": "StatusCallbackEvent", "type": "array", "items": STRING},
                        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                    "required": ["account", "to"],
                    "additionalProperties": False,
                },
                "llm": _llm("create_message", "write"),
            },
            {
                "path": "/v1/settings",
                "methods": ["PUT"],
                "operation_id": "replace_settings",
                "body_media_type": "application/x-www-form-urlencoded",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "settings": {"x-in": "raw-body", "type": "object", "additionalProperties": STRING}
                    },
                    "required": ["settings"],
                },
                "llm": _llm("replace_settings", "write"),
            },
            {
                "path": "/v1/files",
                "methods": ["POST"],
                "operation_id": "upload_file",
                "body_media_type": "multipart/form-data",
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "purpose": {"type": "string", "enum": ["dispute_evidence", "identity_document"]},
                        "file": {**PDF_FILE, "contentMediaType": "image/png"},
                        "pages": {"type": "array", "items": PDF_FILE},
                        "link": {"type": "object", "properties": {"create": {"type": "boolean"}}},
                    },
                    "required": ["purpose", "file"],
                    "additionalProperties": False,
                },
                "llm": _llm("upload_file", "write"),
            },
        ],
    },
    "minimal": {
        "name": "minimal",
        "version": "1.0.0",
        "tenant": "lab",
        "display_name": "Minimal",
        "description": "",
        "status": "draft",
        "backend": {"base_url": "https://minimal.example.com"},
        "endpoints": [],
    },
}


def _stripped(schema: dict[str, Any]) -> dict[str, Any]:
    properties = {
        name: {k: v for k, v in prop.items() if k not in LOCATION_KEYWORDS}
        if isinstance(prop, dict)
        else prop
        for name, prop in (schema.get("properties") or {}).items()
    }
    return {
        "properties": properties,
        "required": sorted(schema.get("required") or []),
        "$defs": schema.get("$defs"),
    }


def _view(op: Operation) -> dict[str, Any]:
    endpoint = op.endpoint
    return {
        "name": op.name,
        "tool_name": op.tool_name,
        "canonical_name": op.canonical_name,
        "description": endpoint.description,
        "tags": endpoint.tags,
        "mcp": endpoint.mcp,
        "llm": endpoint.llm.model_dump(exclude={"tool_name"}) if endpoint.llm else None,
        "input": _stripped(endpoint.effective_input_schema()),
        "bindings": sorted(
            (p.name, p.location.value, p.wire_name, p.file_media_type) for p in binding_for(op).params
        ),
        "output": endpoint.output_schema,
        "backend_url": endpoint.backend_url,
        "body_media_type": binding_for(op).body_media_type,
    }


def assert_equivalent(original: Contract, back: Contract) -> None:
    """Same contract fields (but status), and the same operations: names, schemas, llm, bindings."""
    fields = ("name", "version", "tenant", "display_name", "description", "classification", "backend")
    assert {f: getattr(back, f) for f in fields} == {f: getattr(original, f) for f in fields}
    assert back.status.value == "draft"
    before = {(op.method, op.endpoint.path): _view(op) for op in original.operations()}
    after = {(op.method, op.endpoint.path): _view(op) for op in back.operations()}
    assert sorted(after) == sorted(before)
    for key, view in before.items():
        assert after[key] == view, key


def _round_trip(contract: Contract) -> Contract:
    spec = export_openapi(contract)
    result = import_openapi(spec, tenant=contract.tenant)
    assert result.skipped == []
    assert result.needs_review == []
    assert [f for f in validate_data(result.contract_data) if f.is_error] == []
    return Contract.model_validate(result.contract_data)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_contracts_round_trip(path: Path) -> None:
    contract = Contract.model_validate(load_document(path).data)
    assert_equivalent(contract, _round_trip(contract))


@pytest.mark.parametrize("name", sorted(BUILT))
def test_built_contracts_round_trip(name: str) -> None:
    contract = Contract.model_validate(BUILT[name])
    assert_equivalent(contract, _round_trip(contract))


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()))
def test_imported_fixtures_round_trip(name: str) -> None:
    base_url = RELATIVE_SERVERS.get(name)
    imported = import_openapi(
        load_document(FIXTURES / name).data, tenant="acme", base_url=base_url
    ).contract_data
    contract = Contract.model_validate(imported)
    assert_equivalent(contract, _round_trip(contract))


def test_a_per_endpoint_backend_url_round_trips_as_operation_servers() -> None:
    contract = Contract.model_validate(load_document(ADR_EXAMPLE).data)
    spec = export_openapi(contract)
    assert spec["paths"]["/customers/{id}"]["get"]["servers"] == [
        {"url": "https://backend.example.com/customers"}
    ]
    back = _round_trip(contract)
    assert_equivalent(contract, back)
    assert back.endpoints[0].backend_url == "https://backend.example.com/customers"


def test_form_bodies_are_exported_under_their_media_type() -> None:
    spec = export_openapi(Contract.model_validate(BUILT["forms"]))
    message = spec["paths"]["/2010-04-01/Accounts/{account}/Messages.json"]["post"]["requestBody"]["content"]
    assert list(message) == ["application/x-www-form-urlencoded"]
    form = message["application/x-www-form-urlencoded"]
    assert set(form["schema"]["properties"]) == {"To", "StatusCallbackEvent", "metadata"}
    assert form["encoding"] == {"metadata": {"style": "deepObject", "explode": True}}
    upload = spec["paths"]["/v1/files"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert upload["properties"]["file"] == {
        "type": "string", "contentEncoding": "base64", "contentMediaType": "image/png"
    }


def test_a_multipart_binary_property_imports_as_a_base64_file() -> None:
    spec = export_openapi(Contract.model_validate(BUILT["forms"]))
    upload = spec["paths"]["/v1/files"]["post"]["requestBody"]["content"]["multipart/form-data"]
    upload["schema"]["properties"]["file"] = {"type": "string", "format": "binary"}
    upload["schema"]["properties"]["pages"]["items"] = {**STRING, "contentMediaType": "application/pdf"}
    upload["encoding"] = {"file": {"contentType": "image/png, image/jpeg"}}
    result = import_openapi(spec, tenant="lab")
    [endpoint] = [e for e in result.contract_data["endpoints"] if e["path"] == "/v1/files"]
    assert endpoint["body_media_type"] == "multipart/form-data"
    properties = endpoint["input_schema"]["properties"]
    assert properties["file"] == {
        "x-in": "body", "type": "string", "contentEncoding": "base64", "contentMediaType": "image/png"
    }
    assert properties["pages"]["items"] == {
        "type": "string", "contentMediaType": "application/pdf", "contentEncoding": "base64"
    }


def test_the_example_contracts_exist() -> None:
    assert len(EXAMPLES) >= 2


class TestExportedDocument:
    @pytest.fixture(scope="class")
    @classmethod
    def spec(cls) -> dict[str, Any]:
        return export_openapi(Contract.model_validate(BUILT["locations"]))

    def test_root_fields(self, spec: dict[str, Any]) -> None:
        assert spec["openapi"] == "3.1.0"
        assert spec["info"] == {
            "title": "Every argument location",
            "version": "0.3.0-beta.1",
            "description": "Path, query, header, body, raw body, renamed properties, several methods.",
        }
        assert spec["servers"] == [{"url": "http://127.0.0.1:8080/base"}]
        assert spec["x-colonnade"] == {
            "name": "locations",
            "classification": "restricted",
            "timeout_ms": 1500,
        }
        assert spec["security"] == [{"api_key": []}]
        assert spec["components"]["securitySchemes"] == {
            "api_key": {
                "type": "apiKey",
                "in": "header",
                "name": "X-Api-Key",
                "x-colonnade-secret": "LAB_KEY",
            }
        }

    def test_each_method_of_an_endpoint_is_one_operation(self, spec: dict[str, Any]) -> None:
        item = spec["paths"]["/things/{thing_id}"]
        assert set(item) == {"get", "delete"}
        assert item["get"]["operationId"] == "thing_get"
        assert item["delete"]["x-llm"]["tool_name"] == "thing_delete"
        assert item["get"]["parameters"] == [
            {"name": "thing_id", "in": "path", "required": True, "schema": {"type": "string"}}
        ]
        assert item["get"]["summary"] == "Run thing."
        assert item["get"]["tags"] == ["things"]

    def test_arguments_go_where_the_binding_sends_them(self, spec: dict[str, Any]) -> None:
        put = spec["paths"]["/things/{thing_id}/parts"]["put"]
        assert put["parameters"] == [
            {"name": "thing_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}},
            {"name": "X-Trace-Id", "in": "header", "schema": {"type": "string"}, "x-colonnade-name": "trace"},
            {"name": "dry-run", "in": "query", "schema": {"type": "boolean"}},
        ]
        assert put["requestBody"] == {
            "required": True,
            "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}},
            "x-colonnade-name": "parts",
        }
        assert put["responses"]["200"]["content"]["application/json"]["schema"] == {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
        }

    def test_body_properties_form_one_json_object(self, spec: dict[str, Any]) -> None:
        post = spec["paths"]["/things"]["post"]
        assert post["parameters"] == [{"name": "id", "in": "query", "schema": {"type": "string"}}]
        body = post["requestBody"]["content"]["application/json"]["schema"]
        assert body == {
            "type": "object",
            "properties": {
                "id": {"type": "string", "x-colonnade-name": "body_id"},
                "name": {"type": "string", "description": "Display name."},
                "tree": {"$ref": "#/components/schemas/Node"},
            },
            "required": ["name"],
            "additionalProperties": False,
        }
        assert post["requestBody"]["required"] is True
        assert post["x-colonnade-mcp"] is False
        assert post["x-llm"] is None

    def test_defs_move_to_components_once(self, spec: dict[str, Any]) -> None:
        assert spec["components"]["schemas"] == {
            "Node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
                },
                "required": ["label"],
            }
        }

    def test_the_document_is_valid_json_schema_wherever_it_holds_schemas(self, spec: dict[str, Any]) -> None:
        for item in spec["paths"].values():
            for operation in item.values():
                for param in operation.get("parameters", []):
                    jsonschema.Draft202012Validator.check_schema(param["schema"])


def test_clashing_defs_get_distinct_component_names_and_stay_correct() -> None:
    data = {**BUILT["minimal"], "endpoints": []}
    list_node = {
        "type": "object",
        "properties": {"next": {"$ref": "#/$defs/Node"}, "value": {"type": "integer"}},
    }
    data["endpoints"] = [
        {
            "path": "/trees",
            "methods": ["GET"],
            "operation_id": "tree",
            "output_schema": {
                "type": "object",
                "properties": {"root": {"$ref": "#/$defs/Node"}},
                "$defs": {"Node": NODE},
            },
        },
        {
            "path": "/lists",
            "methods": ["GET"],
            "operation_id": "linked",
            "output_schema": {
                "type": "object",
                "properties": {"head": {"$ref": "#/$defs/Node"}},
                "$defs": {"Node": list_node},
            },
        },
    ]
    spec = export_openapi(Contract.model_validate(data))
    assert set(spec["components"]["schemas"]) == {"Node", "Node_2"}
    lists = spec["paths"]["/lists"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert lists["properties"]["head"] == {"$ref": "#/components/schemas/Node_2"}
    assert spec["components"]["schemas"]["Node_2"]["properties"]["next"] == {
        "$ref": "#/components/schemas/Node_2"
    }
    assert spec["components"]["schemas"]["Node_2"]["x-colonnade-def"] == "Node"
    back = import_openapi(spec, tenant="lab").contract_data
    output = next(e for e in back["endpoints"] if e["operation_id"] == "linked")["output_schema"]
    assert output["properties"]["head"] == {"$ref": "#/$defs/Node"}
    assert "x-colonnade-def" not in output["$defs"]["Node"]
    validator = jsonschema.Draft202012Validator(output)
    assert validator.is_valid({"head": {"value": 1, "next": {"value": 2}}})
    assert not validator.is_valid({"head": {"value": 1, "next": {"value": "two"}}})


def test_a_recursive_root_is_exported_as_a_ref_to_its_component() -> None:
    forest = import_openapi(load_document(FIXTURES / "forest_edge_cases.yaml").data, tenant="acme")
    spec = export_openapi(Contract.model_validate(forest.contract_data))
    taxonomy = spec["paths"]["/taxonomy/{rank}"]["get"]["responses"]["200"]["content"]["application/json"]
    assert taxonomy["schema"] == {"$ref": "#/components/schemas/Taxon"}
    taxon = spec["components"]["schemas"]["Taxon"]
    assert taxon["properties"]["children"]["items"] == {"$ref": "#/components/schemas/Taxon"}


def test_both_body_and_raw_body_cannot_be_exported() -> None:
    data = {
        **BUILT["minimal"],
        "endpoints": [
            {
                "path": "/mixed",
                "methods": ["POST"],
                "operation_id": "mixed",
                "input_schema": {
                    "type": "object",
                    "properties": {"a": {"x-in": "body"}, "b": {"x-in": "raw-body"}},
                },
            }
        ],
    }
    with pytest.raises(OpenApiError) as caught:
        export_openapi(Contract.model_validate(data))
    assert caught.value.message == "POST /mixed has both `body` and `raw-body` properties"


def test_the_same_path_and_method_twice_cannot_be_exported() -> None:
    twice = {"path": "/a", "methods": ["GET"], "operation_id": "a"}
    data = {**BUILT["minimal"], "endpoints": [twice, {**twice, "operation_id": "b"}]}
    with pytest.raises(OpenApiError) as caught:
        export_openapi(Contract.model_validate(data))
    assert caught.value.message == "GET /a appears twice in the contract"
    assert caught.value.pointer == "/endpoints/1"


_RESERVED_HEADERS = {"accept", "content-type", "authorization"}
_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,10}", fullmatch=True)
_SCHEMAS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": ["string", "null"]},
        {"type": "array", "items": {"type": "string"}},
        {"enum": ["a", "b"], "description": "A or B."},
    ]
)


@st.composite
def _endpoints(draw: st.DrawFn) -> dict[str, Any]:
    """One endpoint: a path parameter plus arguments in random locations with random names."""
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]))
    default = "query" if method in ("GET", "DELETE") else "body"
    properties: dict[str, Any] = {"rid": {"type": "string"}}
    taken: set[tuple[str, str]] = set()
    raw_body = draw(st.booleans())
    locations = ["query", "header", "raw-body"] if raw_body else ["query", "header", "body", None]
    for name in draw(st.lists(_NAMES, max_size=6, unique=True)):
        location = draw(st.sampled_from(locations))
        wire = draw(st.one_of(st.none(), _NAMES)) if location not in (None, "raw-body") else None
        key = (location or default, (wire or name).lower())
        if name == "rid" or key in taken or (location == "raw-body" and ("raw-body", "") in taken):
            continue
        if location == "header" and key[1] in _RESERVED_HEADERS:
            continue
        taken.update({key, ("raw-body", "")} if location == "raw-body" else {key})
        prop = dict(draw(_SCHEMAS))
        if location is not None:
            prop["x-in"] = location
        if wire is not None:
            prop["x-name"] = wire
        properties[name] = prop
    required = ["rid", *draw(st.lists(st.sampled_from(sorted(properties)), unique=True))]
    effects = {"GET": "read", "DELETE": "destructive"}.get(method, "write")
    return {
        "path": "/r/{rid}",
        "methods": [method],
        "operation_id": "op",
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(dict.fromkeys(required)),
        },
        "llm": _llm("op", effects),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(endpoint=_endpoints())
def test_random_argument_layouts_round_trip(endpoint: dict[str, Any]) -> None:
    contract = Contract.model_validate({**BUILT["minimal"], "endpoints": [endpoint]})
    assert_equivalent(contract, _round_trip(contract))
