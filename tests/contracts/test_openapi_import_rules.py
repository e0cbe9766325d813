"""Import rules on small inline documents: errors, names, uniqueness, skipped operations."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from colonnade.contracts.openapi import OpenApiError, import_openapi


def _spec(paths: dict[str, Any] | None = None, **root: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Rules API", "version": "1.2.3"},
        "servers": [{"url": "https://rules.example.com"}],
        "paths": paths if paths is not None else {},
    }
    doc.update(root)
    return doc


def _ok(summary: str = "Do it") -> dict[str, Any]:
    return {"summary": summary, "responses": {"200": {"description": "ok"}}}


def _error(doc: Any, **options: Any) -> OpenApiError:
    options.setdefault("tenant", "acme")
    with pytest.raises(OpenApiError) as caught:
        import_openapi(doc, **options)
    return caught.value


def test_swagger_2_is_refused_with_how_to_convert() -> None:
    error = _error({"swagger": "2.0", "info": {"title": "Old", "version": "1"}, "paths": {}})
    assert error.message == "this is a Swagger 2.0 document; only OpenAPI 3.0 and 3.1 can be imported"
    assert error.pointer == "/swagger"
    assert error.hint is not None and "swagger2openapi" in error.hint


@pytest.mark.parametrize(
    ("doc", "message", "pointer"),
    [
        ({"info": {}}, "not an OpenAPI document: the `openapi` field is missing", ""),
        ([1, 2], "an OpenAPI document is a mapping, this is a list", ""),
        (
            {"openapi": "4.0.0", "paths": {}},
            "OpenAPI version '4.0.0' is not supported; only 3.0.x and 3.1.x can be imported",
            "/openapi",
        ),
        ({"openapi": "3.0.3", "paths": ["/a"]}, "`paths` must be a mapping of path -> path item", "/paths"),
    ],
)
def test_documents_that_are_not_openapi_3_are_refused(doc: Any, message: str, pointer: str) -> None:
    error = _error(doc)
    assert (error.message, error.pointer) == (message, pointer)


def test_a_bad_ref_points_at_the_reference() -> None:
    paths = {"/pets": {"get": {**_ok(), "parameters": [{"$ref": "#/components/parameters/Limit"}]}}}
    error = _error(_spec(paths))
    assert error.message == "$ref '#/components/parameters/Limit' does not resolve: nothing at /components"
    assert error.pointer == "/paths/~1pets/get/parameters/0/$ref"


def test_a_ref_alias_cycle_is_an_error() -> None:
    doc = _spec(
        {"/a": {"post": {**_ok(), "requestBody": {"$ref": "#/components/requestBodies/A"}}}},
        components={
            "requestBodies": {
                "A": {"$ref": "#/components/requestBodies/B"},
                "B": {"$ref": "#/components/requestBodies/A"},
            }
        },
    )
    assert "cycle with nothing in between" in _error(doc).message


@pytest.mark.parametrize(
    ("servers", "message", "pointer"),
    [
        (
            [{"url": "/api/v3"}],
            "servers[0].url '/api/v3' is relative; a contract needs an absolute base URL",
            "/servers/0/url",
        ),
        ([], "the document declares no servers", "/servers"),
        (
            [{"url": "https://{tenant}.example.com", "variables": {"tenant": {"enum": ["a"]}}}],
            "server variable {tenant} has no default",
            "/servers/0/variables/tenant",
        ),
    ],
)
def test_without_an_absolute_server_url_the_error_asks_for_base_url(
    servers: list[Any], message: str, pointer: str
) -> None:
    error = _error(_spec(servers=servers))
    assert (error.message, error.pointer) == (message, pointer)
    assert error.hint is not None and "--base-url" in error.hint
    relative = import_openapi(_spec(servers=servers), tenant="acme", base_url="https://api.example.com")
    assert relative.contract_data["backend"]["base_url"] == "https://api.example.com"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tenant": "Acme Corp"}, "tenant 'Acme Corp' is not kebab-case"),
        ({"api": "My_API"}, "API name 'My_API' is not kebab-case"),
        ({"base_url": "api.example.com"}, "base URL 'api.example.com' is not an absolute http(s) URL"),
    ],
)
def test_bad_options_are_refused(options: dict[str, str], message: str) -> None:
    assert _error(_spec(), **options).message == message


def test_a_title_without_letters_needs_an_api_name() -> None:
    doc = _spec(info={"title": "!!!", "version": "1"})
    error = _error(doc)
    assert (error.message, error.pointer) == ("info.title gives no usable contract name", "/info/title")
    assert import_openapi(doc, tenant="acme", api="rules").contract_data["name"] == "rules"


def test_an_undeclared_security_scheme_is_an_error() -> None:
    error = _error(_spec(security=[{"oauth": []}]))
    assert error.message == "security requirement names the undeclared scheme 'oauth'"


def test_an_oauth2_scheme_becomes_a_bearer_secret_and_a_task_for_a_human() -> None:
    doc = _spec(
        security=[{"oauth": ["read"]}],
        components={"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"clientCredentials": {}}}}},
    )
    result = import_openapi(doc, tenant="acme")
    assert result.contract_data["backend"]["auth"] == {"type": "bearer", "secret": "RULES_API_OAUTH"}
    assert [str(n) for n in result.needs_human] == [
        "security scheme oauth: oauth2: obtain an access token for the gateway (flows: clientCredentials) "
        "and keep it in the secret RULES_API_OAUTH; it is sent as a bearer token and not refreshed by the "
        "gateway"
    ]
    assert result.contract_data["needs_review"] == [str(n) for n in result.needs_human]


def test_a_query_key_cannot_be_sent_so_it_is_left_to_a_human_and_never_an_argument() -> None:
    key = {"type": "apiKey", "in": "query", "name": "key"}
    operation = {**_ok(), "parameters": [{"name": "key", "in": "query", "schema": {"type": "string"}}]}
    doc = _spec(
        {"/maps": {"get": operation}}, security=[{"key": []}], components={"securitySchemes": {"key": key}}
    )
    result = import_openapi(doc, tenant="acme")
    assert "auth" not in result.contract_data["backend"]
    assert result.contract_data["endpoints"][0]["input_schema"]["properties"] == {}
    assert [str(n) for n in result.needs_human] == [
        "security scheme key: an API key in the query 'key' cannot be sent by a contract (it sends bearer, "
        "basic or a header key); the operations that need it will be refused by the backend until it is "
        "solved"
    ]


def test_operation_level_schemes_choose_the_auth_and_the_rest_is_listed() -> None:
    schemes = {
        "oauth": {"type": "oauth2", "flows": {"implicit": {}}},
        "api_key": {"type": "apiKey", "in": "header", "name": "api_key"},
        "unused": {"type": "http", "scheme": "basic"},
    }
    paths = {
        "/a": {"get": {**_ok(), "security": [{"oauth": ["r"]}]}},
        "/b": {"get": {**_ok(), "security": [{"api_key": []}, {"oauth": ["r"]}]}},
        "/c": {"get": {**_ok(), "security": [{"api_key": []}]}},
        "/d": {"get": _ok()},
    }
    result = import_openapi(_spec(paths, components={"securitySchemes": schemes}), tenant="acme")
    assert result.contract_data["backend"]["auth"] == {"type": "bearer", "secret": "RULES_API_OAUTH"}
    human = [str(n) for n in result.needs_human]
    assert human[1:] == ["GET /c: needs api_key, but backend.auth sends oauth; check access"]
    assert "security scheme unused: declared but no operation uses it" in [str(n) for n in result.notes]


def test_a_header_named_like_a_key_is_never_an_argument_even_without_a_scheme() -> None:
    operation = {**_ok(), "parameters": [{"name": "X-API-Key", "in": "header", "required": True}]}
    result = import_openapi(_spec({"/things": {"get": operation}}), tenant="acme")
    assert result.contract_data["backend"]["auth"] == {
        "type": "api_key_header",
        "secret": "RULES_API_X_API_KEY",
        "header": "X-API-Key",
    }
    assert result.contract_data["endpoints"][0]["input_schema"]["properties"] == {}
    assert [n.subject for n in result.needs_human] == ["header X-API-Key", "backend.auth"]


def test_operation_ids_stay_unique_and_given_ids_win_over_synthesised_ones() -> None:
    paths = {
        "/users": {"get": {**_ok(), "operationId": "get-user"}, "post": {**_ok(), "operationId": "get_user"}},
        "/things": {"get": _ok(), "put": {**_ok(), "operationId": "get_things"}},
        "/odd": {"get": {**_ok(), "operationId": "/"}},
    }
    result = import_openapi(_spec(paths), tenant="acme")
    ids = [op.operation_id for op in result.imported]
    assert ids == ["get_user", "get_user_2", "get_things_2", "get_things", "get_odd"]
    assert [op.tool_name for op in result.imported] == ids


def test_tool_names_are_cut_to_64_characters_and_stay_unique() -> None:
    long_id = "list" + "VeryLongResourceName" * 5
    paths = {
        "/a": {"get": {**_ok(), "operationId": long_id}},
        "/b": {"get": {**_ok(), "operationId": long_id + "X"}},
    }
    names = [op.tool_name for op in import_openapi(_spec(paths), tenant="acme").imported]
    assert all(len(n) <= 64 for n in names)
    assert names[0] != names[1]
    assert names[1].endswith("_2")


def test_clashing_path_and_query_names_are_kept_apart() -> None:
    operation = {
        **_ok(),
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
            {"name": "id", "in": "query", "schema": {"type": "string"}},
            {"name": "ID", "in": "header", "schema": {"type": "string"}},
        ],
    }
    result = import_openapi(_spec({"/items/{id}": {"get": operation}}), tenant="acme")
    props = result.contract_data["endpoints"][0]["input_schema"]["properties"]
    assert props == {
        "id": {"x-in": "path", "type": "integer"},
        "query_id": {"x-in": "query", "x-name": "id", "type": "string"},
        "header_id": {"x-in": "header", "x-name": "ID", "type": "string"},
    }


def test_reserved_header_parameters_are_ignored_with_a_note() -> None:
    operation = {
        **_ok(),
        "parameters": [
            {"name": "Authorization", "in": "header", "required": True, "schema": {"type": "string"}},
            {"name": "accept", "in": "header", "schema": {"type": "string"}},
            {"name": "X-Tenant", "in": "header", "schema": {"type": "string"}},
        ],
    }
    result = import_openapi(_spec({"/me": {"get": operation}}), tenant="acme")
    assert list(result.contract_data["endpoints"][0]["input_schema"]["properties"]) == ["x_tenant"]
    reserved = "OpenAPI reserves Accept, Content-Type and Authorization (set auth in backend.auth)"
    assert [str(n) for n in result.notes] == [
        f"GET /me: header parameter 'Authorization' ignored: {reserved}",
        f"GET /me: header parameter 'accept' ignored: {reserved}",
    ]


def test_renamed_path_parameters_are_renamed_in_the_template_too() -> None:
    operation = {
        **_ok(),
        "parameters": [
            {"name": "org-id", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "org_id", "in": "path", "required": True, "schema": {"type": "string"}},
        ],
    }
    result = import_openapi(_spec({"/orgs/{org-id}/{org_id}": {"get": operation}}), tenant="acme")
    endpoint = result.contract_data["endpoints"][0]
    assert endpoint["path"] == "/orgs/{org_id}/{path_org_id}"
    assert list(endpoint["input_schema"]["properties"]) == ["org_id", "path_org_id"]


def test_malformed_operations_are_skipped_with_the_reason_not_dropped() -> None:
    paths = {
        "/a": {"get": {**_ok(), "parameters": [{"in": "query"}]}},
        "/b": {"get": "not an operation"},
        "/c": {"get": {**_ok(), "parameters": {"name": "x"}}},
        "/d": {"get": _ok()},
    }
    result = import_openapi(_spec(paths), tenant="acme")
    assert [op.path for op in result.imported] == ["/d"]
    assert {s.path: s.reason for s in result.skipped} == {
        "/a": (
            "parameter at /paths/~1a/get/parameters/0 needs a string `name` and an `in` of "
            "path|query|header|cookie"
        ),
        "/b": "the operation is not a mapping",
        "/c": "parameters at /paths/~1c/get/parameters is not a list",
    }


def test_a_document_without_operations_gives_an_empty_draft_and_says_so() -> None:
    result = import_openapi(_spec(), tenant="acme", source="empty.yaml")
    assert result.contract_data["endpoints"] == []
    assert [str(n) for n in result.notes] == [
        "empty.yaml: the document has no operations; the contract has no endpoints"
    ]


def test_yaml_scalars_are_made_json_compatible() -> None:
    schema = {"type": "string", "format": "date", "default": dt.date(2024, 1, 31)}
    operation = {
        "parameters": [{"name": "day", "in": "query", "schema": schema}],
        "responses": {
            200: {"description": "ok", "content": {"application/json": {"schema": {"type": "integer"}}}}
        },
    }
    result = import_openapi(
        _spec({"/days": {"get": operation}}, info={"title": "Days", "version": 1.0}), tenant="acme"
    )
    endpoint = result.contract_data["endpoints"][0]
    assert endpoint["input_schema"]["properties"]["day"]["default"] == "2024-01-31"
    assert endpoint["output_schema"] == {"type": "integer"}
    assert result.contract_data["version"] == "1.0.0"


def test_first_2xx_response_with_json_wins_and_plus_json_counts() -> None:
    operation = {
        "responses": {
            "400": {"description": "bad", "content": {"application/json": {"schema": {"type": "string"}}}},
            "200": {"description": "csv", "content": {"text/csv": {"schema": {"type": "string"}}}},
            "201": {
                "description": "json",
                "content": {"application/hal+json": {"schema": {"type": "object"}}},
            },
        }
    }
    result = import_openapi(_spec({"/report": {"post": operation}}), tenant="acme")
    assert result.contract_data["endpoints"][0]["output_schema"] == {"type": "object"}


def test_x_colonnade_extension_sets_name_classification_and_timeout() -> None:
    doc = _spec(**{"x-colonnade": {"name": "rules", "classification": "internal", "timeout_ms": 2500}})
    data = import_openapi(doc, tenant="acme").contract_data
    assert (data["name"], data["classification"], data["backend"]["timeout_ms"]) == (
        "rules",
        "internal",
        2500,
    )


def test_an_operation_server_becomes_the_endpoints_backend_url() -> None:
    paths = {
        "/a": {"get": {**_ok(), "servers": [{"url": "https://a.example.com/v2/"}]}},
        "/b": {"servers": [{"url": "https://b.example.com"}], "get": _ok()},
        "/c": {"get": {**_ok(), "servers": [{"url": "/relative"}]}},
        "/d": {"get": _ok()},
    }
    result = import_openapi(_spec(paths), tenant="acme")
    urls = {e["path"]: e.get("backend_url") for e in result.contract_data["endpoints"]}
    assert urls == {"/a": "https://a.example.com/v2", "/b": "https://b.example.com", "/c": None, "/d": None}
    assert [str(n) for n in result.notes] == [
        "GET /c: server '/relative' is not an absolute URL without variables; backend.base_url is used"
    ]


def test_a_key_like_header_beside_a_declared_scheme_is_dropped_and_flagged() -> None:
    operation = {**_ok(), "parameters": [{"name": "X-Api-Key", "in": "header"}], "security": [{"bearer": []}]}
    schemes = {"bearer": {"type": "http", "scheme": "bearer"}}
    result = import_openapi(
        _spec({"/things": {"get": operation}}, components={"securitySchemes": schemes}), tenant="acme"
    )
    assert result.contract_data["backend"]["auth"]["type"] == "bearer"
    assert result.contract_data["endpoints"][0]["input_schema"]["properties"] == {}
    assert (
        "header X-Api-Key: looks like a credential, so it is no argument; backend.auth sends bearer"
        in " ".join(str(n) for n in result.needs_human)
    )
