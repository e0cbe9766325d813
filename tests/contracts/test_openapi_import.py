"""Importing hand-written OpenAPI documents in the styles of well-known public APIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract
from colonnade.contracts.openapi import ImportResult, import_openapi
from colonnade.contracts.validate import validate_data

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi"
ALL_FIXTURES = sorted(p.name for p in FIXTURES.iterdir())


RELATIVE_SERVERS = {"petstore_public.yaml": "https://petstore3.example.com/api/v3"}  # like the public one


def _import(name: str, **options: Any) -> ImportResult:
    options.setdefault("tenant", "acme")
    options.setdefault("base_url", RELATIVE_SERVERS.get(name))
    return import_openapi(load_document(FIXTURES / name).data, **options)


def _endpoint(result: ImportResult, method: str, path: str) -> dict[str, Any]:
    matches = [e for e in result.contract_data["endpoints"] if e["path"] == path and e["methods"] == [method]]
    assert len(matches) == 1, f"{method} {path}: {len(matches)} endpoints"
    return matches[0]


def _properties(endpoint: dict[str, Any]) -> dict[str, Any]:
    return dict(endpoint["input_schema"]["properties"])


def _review(result: ImportResult) -> dict[str, str]:
    return {item.operation_id: item.reason for item in result.needs_review}


def _skipped(result: ImportResult) -> dict[str, str]:
    return {f"{s.method} {s.path}": s.reason for s in result.skipped}


def _notes(result: ImportResult) -> list[str]:
    return [str(note) for note in result.notes]


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_imports_to_a_valid_draft_contract(name: str) -> None:
    result = _import(name)
    errors = [f for f in validate_data(result.contract_data) if f.is_error]
    assert errors == []
    contract = Contract.model_validate(result.contract_data)
    assert contract.status.value == "draft"
    for endpoint in contract.endpoints:
        jsonschema.Draft202012Validator.check_schema(endpoint.effective_input_schema())
        if endpoint.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(endpoint.output_schema)
    ops = [(o.method, o.path) for o in result.imported]
    assert ops == [(o.method, o.endpoint.path) for o in contract.operations()]
    assert len({o.tool_name for o in contract.operations()}) == len(contract.endpoints)


def test_fixtures_cover_at_least_five_api_styles() -> None:
    assert len(ALL_FIXTURES) >= 5


class TestPetstore:
    """OpenAPI 3.0 YAML with components, shared parameters and request bodies."""

    @pytest.fixture(scope="class")
    @classmethod
    def result(cls) -> ImportResult:
        return _import("petstore.yaml")

    def test_contract_fields_come_from_info_servers_and_security(self, result: ImportResult) -> None:
        data = result.contract_data
        assert data["name"] == "swagger-petstore-openapi-3-0"
        assert data["version"] == "1.0.0"
        assert data["tenant"] == "acme"
        assert data["display_name"] == "Swagger Petstore - OpenAPI 3.0"
        assert data["description"] == "A sample pet store server. Pets, orders and the store's inventory."
        assert data["status"] == "draft"
        assert data["backend"] == {
            "base_url": "https://petstore3.example.com/api/v3",
            "auth": {
                "type": "api_key_header",
                "secret": "SWAGGER_PETSTORE_OPENAPI_3_0_API_KEY",
                "header": "api_key",
            },
        }
        assert "info.version: '1.0' written as the semantic version 1.0.0" in _notes(result)

    def test_one_endpoint_per_operation_with_operation_ids_kept(self, result: ImportResult) -> None:
        assert [(o.method, o.path, o.operation_id) for o in result.imported] == [
            ("POST", "/pet", "addPet"),
            ("PUT", "/pet", "updatePet"),
            ("GET", "/pet/findByStatus", "findPetsByStatus"),
            ("GET", "/pet/{petId}", "getPetById"),
            ("POST", "/pet/{petId}", "updatePetWithForm"),
            ("DELETE", "/pet/{petId}", "deletePet"),
            ("GET", "/store/inventory", "getInventory"),
            ("POST", "/store/order", "placeOrder"),
            ("GET", "/user/logout", "logoutUser"),
        ]

    def test_json_body_properties_become_body_arguments_without_read_only_ones(
        self, result: ImportResult
    ) -> None:
        add_pet = _endpoint(result, "POST", "/pet")
        props = _properties(add_pet)
        assert list(props) == ["name", "nickname", "category", "photoUrls", "tags", "status"]
        assert {p["x-in"] for p in props.values()} == {"body"}
        assert add_pet["input_schema"]["required"] == ["name", "photoUrls"]
        assert add_pet["input_schema"]["additionalProperties"] is False
        assert props["nickname"] == {"x-in": "body", "type": ["string", "null"]}
        assert props["status"]["enum"] == ["available", "pending", "sold", None]
        assert props["tags"]["items"] == {
            "type": "object",
            "properties": {"id": {"type": "integer", "format": "int64"}, "name": {"type": "string"}},
        }
        assert props["name"]["examples"] == ["doggie"]
        assert "id" in add_pet["output_schema"]["properties"]
        assert "request body also accepts application/xml, application/x-www-form-urlencoded" in " ".join(
            _notes(result)
        )

    def test_shared_path_parameter_and_a_credential_header_that_is_no_argument(
        self, result: ImportResult
    ) -> None:
        get_pet = _endpoint(result, "GET", "/pet/{petId}")
        assert _properties(get_pet) == {
            "petId": {"x-in": "path", "type": "integer", "format": "int64", "description": "ID of pet"}
        }
        assert get_pet["input_schema"]["required"] == ["petId"]
        delete = _endpoint(result, "DELETE", "/pet/{petId}")
        assert list(_properties(delete)) == ["petId"]  # `api_key` is the security scheme's header
        assert delete["input_schema"]["required"] == ["petId"]
        assert (
            "DELETE /pet/{petId}: header parameter 'api_key' is the credential of security scheme api_key: "
            "not an argument, backend.auth sends it"
        ) in _notes(result)

    def test_query_parameters_and_array_output(self, result: ImportResult) -> None:
        find = _endpoint(result, "GET", "/pet/findByStatus")
        assert _properties(find)["status"] == {
            "x-in": "query",
            "type": "string",
            "default": "available",
            "enum": ["available", "pending", "sold"],
            "description": "Status values that need to be considered for filter",
        }
        assert "required" not in find["input_schema"]
        assert find["output_schema"]["type"] == "array"
        assert find["output_schema"]["items"]["required"] == ["name", "photoUrls"]

    def test_exclusive_bounds_are_rewritten_and_read_only_ids_dropped(self, result: ImportResult) -> None:
        order = _endpoint(result, "POST", "/store/order")
        props = _properties(order)
        assert "id" not in props
        assert props["quantity"] == {
            "x-in": "body",
            "type": "integer",
            "format": "int32",
            "exclusiveMinimum": 0,
            "maximum": 100,
        }
        assert order["output_schema"]["properties"]["id"]["readOnly"] is True

    def test_output_schema_is_the_first_2xx_json_response(self, result: ImportResult) -> None:
        inventory = _endpoint(result, "GET", "/store/inventory")
        assert inventory["output_schema"] == {
            "type": "object",
            "additionalProperties": {"type": "integer", "format": "int32"},
        }
        assert _properties(inventory) == {}
        assert "output_schema" not in _endpoint(result, "GET", "/user/logout")

    def test_binary_upload_is_skipped_with_the_reason(self, result: ImportResult) -> None:
        [skip] = result.skipped
        assert (skip.method, skip.path, skip.operation_id) == (
            "POST",
            "/pet/{petId}/uploadImage",
            "uploadFile",
        )
        assert skip.reason.startswith(
            "request body is application/octet-stream; only JSON, form (application/x-www-form-urlencoded) "
            "and multipart/form-data bodies can be mapped"
        )
        assert skip.pointer == "/paths/~1pet~1{petId}~1uploadImage/post"

    def test_every_operation_gets_a_seeded_llm_block_to_review(self, result: ImportResult) -> None:
        review = _review(result)
        assert set(review) == {o.operation_id for o in result.imported}
        assert (
            review["addPet"]
            == "no x-llm: drafted from summary and description; side_effects 'write' guessed from POST"
        )
        assert review["updatePet"] == "no x-llm: drafted from summary; side_effects 'write' guessed from PUT"
        add_pet = _endpoint(result, "POST", "/pet")["llm"]
        assert add_pet == {
            "summary": "Add a new pet to the store",
            "intent": "Use to add a new pet to the store.",
            "tool_name": "add_pet",
            "side_effects": "write",
            "safe_for_agents": True,
            "requires_human_approval": False,
            "examples": [],
        }
        get_pet = _endpoint(result, "GET", "/pet/{petId}")["llm"]
        assert (get_pet["summary"], get_pet["intent"], get_pet["side_effects"]) == (
            "Find pet by ID",
            "Returns a single pet",
            "read",
        )
        delete = _endpoint(result, "DELETE", "/pet/{petId}")["llm"]
        assert (delete["side_effects"], delete["requires_human_approval"], delete["safe_for_agents"]) == (
            "destructive",
            True,
            False,
        )


class TestGitHub:
    """OpenAPI 3.1 JSON: shared parameters, headers, type arrays, operationIds with slashes."""

    @pytest.fixture(scope="class")
    @classmethod
    def result(cls) -> ImportResult:
        return _import("github.json")

    def test_contract_fields(self, result: ImportResult) -> None:
        data = result.contract_data
        assert (data["name"], data["version"], data["display_name"]) == (
            "github-v3-rest-api",
            "1.1.4",
            "GitHub v3 REST API",
        )
        assert (
            data["description"]
            == "GitHub's v3 REST API: a hand-written excerpt with repositories and issues."
        )
        assert data["backend"] == {
            "base_url": "https://api.github.com",
            "auth": {"type": "bearer", "secret": "GITHUB_V3_REST_API_BEARER"},
        }

    def test_operation_ids_with_slashes_and_dashes_become_identifiers(self, result: ImportResult) -> None:
        assert [(o.operation_id, o.tool_name) for o in result.imported] == [
            ("repos_get", "repos_get"),
            ("issues_list_for_repo", "issues_list_for_repo"),
            ("issues_create", "issues_create"),
            ("issues_lock", "issues_lock"),
            ("issues_unlock", "issues_unlock"),
            ("issues_set_labels", "issues_set_labels"),
        ]

    def test_path_and_header_parameters(self, result: ImportResult) -> None:
        repo = _endpoint(result, "GET", "/repos/{owner}/{repo}")
        props = _properties(repo)
        assert list(props) == ["owner", "repo", "x_github_api_version"]
        assert props["owner"]["x-in"] == "path"
        assert props["x_github_api_version"] == {
            "x-in": "header",
            "x-name": "X-GitHub-Api-Version",
            "type": "string",
            "enum": ["2022-11-28"],
            "default": "2022-11-28",
            "description": "The API version to use.",
        }
        assert repo["input_schema"]["required"] == ["owner", "repo"]
        assert repo["output_schema"]["properties"]["owner"]["properties"]["name"] == {
            "type": ["string", "null"]
        }

    def test_path_level_and_operation_parameters_merge(self, result: ImportResult) -> None:
        issues = _endpoint(result, "GET", "/repos/{owner}/{repo}/issues")
        props = _properties(issues)
        assert list(props) == [
            "owner",
            "repo",
            "state",
            "labels",
            "since",
            "per_page",
            "page",
            "x_github_api_version",
        ]
        assert props["per_page"] == {
            "x-in": "query",
            "type": "integer",
            "default": 30,
            "maximum": 100,
            "description": "The number of results per page (max 100).",
        }
        assert props["since"]["format"] == "date-time"
        user = issues["output_schema"]["items"]["properties"]["user"]
        assert user["anyOf"][0] == {"type": "null"}
        assert user["anyOf"][1]["title"] == "Simple User"

    def test_json_body_with_type_arrays_and_201_output(self, result: ImportResult) -> None:
        create = _endpoint(result, "POST", "/repos/{owner}/{repo}/issues")
        props = _properties(create)
        assert list(props) == ["owner", "repo", "title", "body", "assignees", "milestone", "labels"]
        assert props["body"] == {
            "x-in": "body",
            "type": ["string", "null"],
            "description": "The contents of the issue.",
        }
        assert props["milestone"]["type"] == ["string", "integer", "null"]
        assert props["title"]["oneOf"] == [{"type": "string"}, {"type": "integer"}]
        assert create["input_schema"]["required"] == ["owner", "repo", "title"]
        assert create["output_schema"]["title"] == "Issue"

    def test_non_object_json_bodies_become_one_raw_body_argument(self, result: ImportResult) -> None:
        lock = _endpoint(result, "PUT", "/repos/{owner}/{repo}/issues/{issue_number}/lock")
        body = _properties(lock)["body"]
        assert body["x-in"] == "raw-body"
        assert body["type"] == ["object", "null"]
        assert lock["input_schema"]["required"] == ["owner", "repo", "issue_number"]
        assert "output_schema" not in lock
        labels = _endpoint(result, "PATCH", "/repos/{owner}/{repo}/issues/{issue_number}/labels")
        assert _properties(labels)["body"] == {
            "x-in": "raw-body",
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "minLength": 1},
        }

    def test_side_effects_follow_the_method(self, result: ImportResult) -> None:
        effects = {
            o.operation_id: _endpoint(result, o.method, o.path)["llm"]["side_effects"]
            for o in result.imported
        }
        assert effects == {
            "repos_get": "read",
            "issues_list_for_repo": "read",
            "issues_create": "write",
            "issues_lock": "write",
            "issues_unlock": "destructive",
            "issues_set_labels": "write",
        }
        assert result.skipped == []


class TestStripe:
    """Form-encoded v1 writes and a multipart upload, JSON v2 endpoints, a date as version, HTML prose."""

    @pytest.fixture(scope="class")
    @classmethod
    def result(cls) -> ImportResult:
        return _import("stripe.yaml")

    def test_contract_fields(self, result: ImportResult) -> None:
        data = result.contract_data
        assert (data["name"], data["version"]) == ("stripe-api", "2024.6.20")
        assert data["backend"] == {
            "base_url": "https://api.stripe.com",
            "auth": {"type": "bearer", "secret": "STRIPE_API_BEARER_AUTH"},
        }

    def test_form_and_multipart_bodies_are_imported_with_their_media_type(
        self, result: ImportResult
    ) -> None:
        assert result.skipped == []
        create = _endpoint(result, "POST", "/v1/customers")
        assert create["body_media_type"] == "application/x-www-form-urlencoded"
        assert _properties(create) == {
            "email": {"x-in": "body", "type": "string"},
            "name": {"x-in": "body", "type": "string"},
        }
        update = _endpoint(result, "POST", "/v1/customers/{customer}")
        assert update["body_media_type"] == "application/x-www-form-urlencoded"
        assert list(_properties(update)) == ["customer", "description"]
        upload = _endpoint(result, "POST", "/v1/files")
        assert upload["body_media_type"] == "multipart/form-data"
        assert _properties(upload)["file"] == {
            "x-in": "body",
            "type": "string",
            "contentEncoding": "base64",
            "contentMediaType": "application/octet-stream",
        }
        assert "required" not in upload["input_schema"]  # the fixture's schema lists none

    def test_json_operations_are_imported(self, result: ImportResult) -> None:
        assert [o.operation_id for o in result.imported] == [
            "GetCustomers",
            "PostCustomers",
            "GetCustomersCustomer",
            "PostCustomersCustomer",
            "DeleteCustomersCustomer",
            "PostFiles",
            "PostV2BillingMeterEvents",
        ]
        assert "body_media_type" not in _endpoint(result, "POST", "/v2/billing/meter_events")
        assert "body_media_type" not in _endpoint(result, "DELETE", "/v1/customers/{customer}")

    def test_query_parameter_with_brackets_keeps_its_wire_name(self, result: ImportResult) -> None:
        customer = _endpoint(result, "GET", "/v1/customers/{customer}")
        assert _properties(customer)["expand"] == {
            "x-in": "query",
            "x-name": "expand[]",
            "type": "array",
            "items": {"type": "string"},
        }

    def test_nullable_any_of_output_accepts_null_and_the_object(self, result: ImportResult) -> None:
        listing = _endpoint(result, "GET", "/v1/customers")
        customer = listing["output_schema"]["properties"]["data"]["items"]
        assert customer["properties"]["email"] == {"type": ["string", "null"], "maxLength": 5000}
        address = jsonschema.Draft202012Validator(customer["properties"]["address"])
        assert address.is_valid(None)
        assert address.is_valid({"city": "Springfield", "country": None})
        assert not address.is_valid({"city": 7})
        assert "x-resourceId" in customer

    def test_empty_form_body_of_a_delete_is_ignored_with_a_note(self, result: ImportResult) -> None:
        delete = _endpoint(result, "DELETE", "/v1/customers/{customer}")
        assert list(_properties(delete)) == ["customer"]
        assert delete["output_schema"]["properties"]["deleted"] == {"type": "boolean", "enum": [True]}
        assert (
            "DELETE /v1/customers/{customer}: request body (application/x-www-form-urlencoded) "
            "declares no fields; not imported"
        ) in _notes(result)

    def test_json_body_with_headers(self, result: ImportResult) -> None:
        events = _endpoint(result, "POST", "/v2/billing/meter_events")
        props = _properties(events)
        assert list(props) == [
            "stripe_version",
            "idempotency_key",
            "event_name",
            "identifier",
            "payload",
            "timestamp",
        ]
        assert props["idempotency_key"] == {
            "x-in": "header",
            "x-name": "Idempotency-Key",
            "type": "string",
            "maxLength": 255,
        }
        assert props["payload"] == {
            "x-in": "body",
            "type": "object",
            "additionalProperties": {"type": "string"},
        }
        assert events["input_schema"]["required"] == ["event_name", "payload"]

    def test_seeded_prose_drops_html(self, result: ImportResult) -> None:
        llm = _endpoint(result, "GET", "/v1/customers")["llm"]
        assert llm["summary"] == "Returns a list of your customers."
        assert llm["intent"].startswith("Returns a list of your customers. The customers are returned sorted")
        assert "<p>" not in llm["intent"]
        assert _review(result)["GetCustomers"] == (
            "no x-llm: drafted from description; side_effects 'read' guessed from GET"
        )


class TestXLlm:
    """`x-llm` blocks: complete ones are kept, partial or invalid ones are completed and flagged."""

    @pytest.fixture(scope="class")
    @classmethod
    def result(cls) -> ImportResult:
        return _import("tasks_x_llm.yaml")

    def test_contract_fields(self, result: ImportResult) -> None:
        data = result.contract_data
        assert (data["name"], data["version"], data["backend"]) == (
            "acme-tasks",
            "2.0.0",
            {"base_url": "https://tasks.example.com/api"},
        )

    def test_complete_x_llm_blocks_are_used_as_written(self, result: ImportResult) -> None:
        search = _endpoint(result, "GET", "/tasks")["llm"]
        assert search == {
            "summary": "Search tasks by text and return the matching tasks.",
            "intent": "Use when you need a task id or want to see which tasks mention a word.",
            "tool_name": "search_tasks",
            "side_effects": "read",
            "safe_for_agents": True,
            "requires_human_approval": False,
            "examples": [{"input": {"q": "invoice"}, "expected_output_contains": "Send invoice"}],
        }
        create = _endpoint(result, "POST", "/tasks")
        assert create["llm"]["tool_name"] == "create_task"
        assert create["llm"]["examples"][0]["input"] == {"title": "Send invoice", "due": "2030-01-31"}
        assert "listTasks" not in _review(result)
        assert "createTask" not in _review(result)

    def test_operations_without_x_llm_are_seeded(self, result: ImportResult) -> None:
        get = _endpoint(result, "GET", "/tasks/{id}")["llm"]
        assert (get["summary"], get["intent"], get["tool_name"]) == (
            "Get a task",
            "Returns one task by id, with its project and due date.",
            "get_task",
        )
        assert _review(result)["getTask"].startswith("no x-llm: drafted from summary and description")

    def test_partial_and_clashing_x_llm_is_completed_and_flagged(self, result: ImportResult) -> None:
        replace = _endpoint(result, "PUT", "/tasks/{id}")["llm"]
        assert replace["summary"] == "Replace every field of a task."
        assert replace["intent"] == "Use to replace a task."
        assert replace["tool_name"] == "replace_task"
        assert _review(result)["replaceTask"] == (
            "x-llm lacks intent (drafted); x-llm tool_name already used by another operation"
        )

    def test_invalid_fields_are_replaced_and_unknown_keys_dropped(self, result: ImportResult) -> None:
        delete = _endpoint(result, "DELETE", "/tasks/{id}")["llm"]
        assert delete["summary"] == "Delete a task forever."
        assert delete["side_effects"] == "destructive"
        assert "owner" not in delete
        assert _review(result)["deleteTask"] == (
            "x-llm has an invalid side_effects (drafted); x-llm has unknown keys owner (dropped)"
        )
        complete = _endpoint(result, "POST", "/tasks/{id}/complete")["llm"]
        assert complete["tool_name"] == "complete_task"
        assert complete["examples"] == []
        assert _review(result)["completeTask"] == (
            "x-llm lacks intent, examples (drafted); x-llm has an invalid tool_name (drafted)"
        )

    def test_x_llm_that_is_not_a_mapping_is_replaced(self, result: ImportResult) -> None:
        reindex = _endpoint(result, "POST", "/admin/reindex")
        assert reindex["mcp"] is False
        assert reindex["llm"]["summary"] == "Rebuild the search index"
        assert _review(result)["reindex"] == "x-llm is a str, not a mapping: llm block drafted instead"

    def test_name_clashes_between_locations_are_resolved_not_merged(self, result: ImportResult) -> None:
        replace = _endpoint(result, "PUT", "/tasks/{id}")
        props = _properties(replace)
        assert {name: (p["x-in"], p.get("x-name")) for name, p in props.items()} == {
            "id": ("path", None),
            "version": ("query", None),
            "x_request_id": ("header", "X-Request-Id"),
            "body_id": ("body", "id"),
            "body_version": ("body", "version"),
            "title": ("body", None),
        }
        assert replace["input_schema"]["required"] == ["id", "version", "title"]

    def test_all_of_output_keeps_read_only_fields(self, result: ImportResult) -> None:
        get = _endpoint(result, "GET", "/tasks/{id}")
        assert get["output_schema"]["allOf"][1]["properties"]["id"] == {"type": "string", "readOnly": True}
        create = _endpoint(result, "POST", "/tasks")
        assert list(_properties(create)) == ["idempotency_key", "title", "due", "project_id"]
        assert create["input_schema"]["required"] == ["title"]


class TestForestEdgeCases:
    """No operationIds, server variables, recursion, odd bodies, parameters and methods."""

    @pytest.fixture(scope="class")
    @classmethod
    def result(cls) -> ImportResult:
        return _import("forest_edge_cases.yaml")

    def test_server_variables_take_their_defaults(self, result: ImportResult) -> None:
        data = result.contract_data
        assert data["backend"] == {"base_url": "https://eu.forest.example.com/v3"}
        assert (data["name"], data["version"]) == ("forest-inventory", "3.0.0")
        assert data["description"] == "Forest Inventory, imported from OpenAPI."

    def test_operation_ids_are_synthesised_from_method_and_path(self, result: ImportResult) -> None:
        assert [(o.method, o.path, o.operation_id) for o in result.imported] == [
            ("GET", "/", "get_root"),
            ("GET", "/plots/{plot_id}/trees", "get_plots_by_plot_id_trees"),
            ("POST", "/plots/{plot_id}/trees", "post_plots_by_plot_id_trees"),
            ("PUT", "/plots/{plotId}/observations", "put_plots_by_plotId_observations"),
            ("GET", "/taxonomy/{rank}", "get_taxonomy_by_rank"),
            ("DELETE", "/threads/{id}", "delete_threads_by_id"),
            ("PATCH", "/comments/{id}", "patch_comments_by_id"),
        ]

    def test_odd_parameter_names_get_identifiers_and_wire_names(self, result: ImportResult) -> None:
        trees = _endpoint(result, "GET", "/plots/{plot_id}/trees")
        props = _properties(trees)
        assert {name: (p["x-in"], p.get("x-name")) for name, p in props.items()} == {
            "plot_id": ("path", None),
            "species_name": ("query", "species.name"),
            "filter": ("query", None),
            "accept_language": ("header", "Accept-Language"),
        }
        assert props["filter"]["properties"] == {"min_height_m": {"type": "number"}}
        assert trees["output_schema"]["items"]["properties"]["species"] == {
            "type": "string",
            "pattern": "^[A-Z][a-z]+ [a-z]+$",
            "description": "Latin name of the species.",
        }

    def test_array_body_is_one_required_raw_body_argument(self, result: ImportResult) -> None:
        post = _endpoint(result, "POST", "/plots/{plot_id}/trees")
        body = _properties(post)["body"]
        assert body["x-in"] == "raw-body"
        assert (body["type"], body["minItems"]) == ("array", 1)
        assert body["items"]["required"] == ["tag", "species"]
        assert post["input_schema"]["required"] == ["plot_id", "body"]

    def test_one_of_body_is_raw_and_undeclared_path_parameters_are_added(self, result: ImportResult) -> None:
        put = _endpoint(result, "PUT", "/plots/{plotId}/observations")
        props = _properties(put)
        assert props["plotId"] == {"x-in": "path", "type": "string"}
        assert [alt["properties"]["kind"] for alt in props["body"]["oneOf"]] == [
            {"const": "sighting"},
            {"const": "measurement"},
        ]
        assert put["input_schema"]["required"] == ["plotId"]

    def test_recursive_schema_is_kept_exact_with_defs(self, result: ImportResult) -> None:
        taxonomy = _endpoint(result, "GET", "/taxonomy/{rank}")
        output = taxonomy["output_schema"]
        assert output["properties"]["children"]["items"] == {"$ref": "#/$defs/Taxon"}
        assert set(output["$defs"]) == {"Taxon"}
        validator = jsonschema.Draft202012Validator(output)
        tree = {
            "name": "Pinaceae",
            "rank": "family",
            "children": [{"name": "Pinus", "rank": "genus", "children": []}],
        }
        assert validator.is_valid(tree)
        assert not validator.is_valid({**tree, "children": [{"name": "Pinus", "rank": "genus"}]})
        assert _properties(taxonomy)["depth"] == {
            "x-in": "query",
            "type": "integer",
            "minimum": 0,
            "exclusiveMaximum": 10,
        }

    def test_mutual_recursion_in_inputs_drops_read_only_fields_in_defs_too(
        self, result: ImportResult
    ) -> None:
        patch = _endpoint(result, "PATCH", "/comments/{id}")
        schema = patch["input_schema"]
        assert list(schema["properties"]) == ["id", "text", "thread", "replies"]
        assert schema["properties"]["id"]["x-in"] == "path"
        assert "id" not in schema["$defs"]["Comment"]["properties"]
        validator = jsonschema.Draft202012Validator(schema)
        assert validator.is_valid({"id": "c1", "replies": [{"text": "hi", "replies": [{"text": "ho"}]}]})
        assert not validator.is_valid({"id": "c1", "replies": [{"replies": [{"text": 3}]}]})
        thread = _endpoint(result, "DELETE", "/threads/{id}")["output_schema"]
        assert set(thread["$defs"]) == {"Thread", "Comment"}
        jsonschema.Draft202012Validator.check_schema(thread)

    def test_unmappable_operations_are_skipped_with_reasons(self, result: ImportResult) -> None:
        assert _skipped(result) == {
            "TRACE /plots/{plot-id}/trees": (
                "method TRACE cannot be a contract endpoint "
                "(supported: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS)"
            ),
            "GET /threads/{id}": "required cookie parameter 'auth': contracts cannot send cookies",
        }

    def test_losses_are_noted(self, result: ImportResult) -> None:
        assert _notes(result) == [
            "info.version: '3' written as the semantic version 3.0.0",
            "GET /: success response is not JSON (200 text/plain); no output_schema",
            "GET /plots/{plot-id}/trees: optional cookie parameter 'session' not imported",
            'GET /plots/{plot-id}/trees: the response is an array: MCP clients get it as {"result": ...}',
            "PUT /plots/{plotId}/observations: path parameter {plotId} is not declared; imported as a string",
            "webhooks: webhooks describe calls the API makes, not tools; not imported",
        ]

    def test_seeds_without_summary_use_the_first_sentence(self, result: ImportResult) -> None:
        llm = _endpoint(result, "GET", "/plots/{plot_id}/trees")["llm"]
        assert llm["summary"] == "Lists the trees of a plot."
        assert llm["intent"] == "Lists the trees of a plot. Trees are ordered by tag number."
        destructive = _endpoint(result, "DELETE", "/threads/{id}")["llm"]
        assert (destructive["side_effects"], destructive["requires_human_approval"]) == ("destructive", True)


def test_api_and_base_url_options_override_the_document() -> None:
    result = _import("petstore.yaml", api="pets", base_url="http://127.0.0.1:9000/v3/")
    assert result.contract_data["name"] == "pets"
    assert result.contract_data["backend"]["base_url"] == "http://127.0.0.1:9000/v3"
    assert result.contract_data["backend"]["auth"]["secret"] == "PETS_API_KEY"


def test_the_tenant_is_taken_as_given() -> None:
    assert _import("github.json", tenant="open-source").contract_data["tenant"] == "open-source"


class TestPublicPetstoreAndSpotify:
    """Two documents a new user imported: credentials, array and string responses (issue 12)."""

    def test_petstore_security_becomes_backend_auth_and_never_an_argument(self) -> None:
        result = _import("petstore_public.yaml", api="pets")
        assert result.contract_data["backend"]["auth"] == {"type": "bearer", "secret": "PETS_PETSTORE_AUTH"}
        assert list(_properties(_endpoint(result, "DELETE", "/pet/{petId}"))) == ["petId"]
        assert [n.subject for n in result.needs_human] == [
            "security scheme petstore_auth",
            "GET /store/inventory",
        ]
        assert "obtain an access token" in result.needs_human[0].message
        assert result.contract_data["needs_review"][:2] == [str(n) for n in result.needs_human]  # first

    @pytest.mark.parametrize(
        ("name", "method", "path", "kind"),
        [
            ("petstore_public.yaml", "GET", "/pet/findByStatus", "an array"),
            ("petstore_public.yaml", "GET", "/user/login", "a string"),
            ("spotify_like.yaml", "GET", "/me/albums/contains", "an array"),
        ],
    )
    def test_a_non_object_response_is_noted_as_wrapped(
        self, name: str, method: str, path: str, kind: str
    ) -> None:
        notes = _notes(_import(name))
        assert f'{method} {path}: the response is {kind}: MCP clients get it as {{"result": ...}}' in notes

    def test_spotify_oauth_is_a_bearer_secret_for_a_human_to_fill(self) -> None:
        result = _import("spotify_like.yaml", api="spotify")
        assert result.contract_data["backend"] == {
            "base_url": "https://api.spotify.com/v1",
            "auth": {"type": "bearer", "secret": "SPOTIFY_OAUTH_2_0"},
        }
        assert [str(n) for n in result.needs_human] == [
            "security scheme oauth_2_0: oauth2: obtain an access token for the gateway (flows: "
            "authorizationCode) and keep it in the secret SPOTIFY_OAUTH_2_0; it is sent as a bearer token "
            "and not refreshed by the gateway"
        ]
