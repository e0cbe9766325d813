"""Contract -> tools: names, descriptions, annotations, typed `_meta`, shown schemas, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from colonnade.catalog import (
    Determinism,
    DuplicateToolName,
    Tool,
    from_wire,
    project_contract,
    wire_name_pattern,
)
from colonnade.catalog.http_binding import ParamLocation
from colonnade.catalog.projection import humanize
from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract, SideEffects

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "contracts").glob("*.yaml"))


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {tool.canonical_name.rsplit(":", 1)[1]: tool for tool in tools}


def test_every_mcp_operation_becomes_one_tool_in_document_order(crm: Contract) -> None:
    tools = project_contract(crm)

    assert [t.operation for t in tools] == [
        "searchCustomers",
        "getCustomerByID",
        "create_customer",
        "replace_customer",
        "delete_customer",
        "merge_customer",
        "validate_email",
        "health",
        "end_session",
        "retag",
        "note_get",
        "note_put",
    ]
    assert "acme:crm:reindex" not in {t.canonical_name for t in tools}


def test_canonical_name_uses_llm_tool_name_and_wire_name_is_readable(crm: Contract) -> None:
    search = by_name(project_contract(crm))["search_customers"]

    assert search.canonical_name == "acme:crm:search_customers"
    assert search.wire_name == "acme__crm__search_customers"
    assert (search.tenant, search.api, search.operation) == ("acme", "crm", "searchCustomers")
    assert search.version == "1.0.0"
    assert search.tags == ("crm", "search")
    assert (search.source, search.adapter) == ("contract", "http")


def test_mcp_profile_uses_dots_between_segments(crm: Contract) -> None:
    tools = project_contract(crm, profile="mcp")

    assert by_name(tools)["search_customers"].wire_name == "acme.crm.search_customers"
    assert all(wire_name_pattern("mcp").match(t.wire_name) for t in tools)


def test_description_composes_summary_intent_and_inputs(crm: Contract) -> None:
    tools = by_name(project_contract(crm))

    assert tools["search_customers"].description == (
        "Search customers by name or e-mail. Use when you know part of a name but not the customer id.\n"
        "Inputs: q*, limit"
    )
    assert tools["delete_customer"].description.startswith("Delete a customer! Use only on request.")


def test_description_without_llm_falls_back_to_endpoint_description_then_method_and_path(
    crm: Contract,
) -> None:
    tools = by_name(project_contract(crm))

    assert tools["health"].description == "Liveness of the CRM backend."
    assert tools["end_session"].description == "DELETE /sessions/{session_id}\nInputs: session_id*"
    assert tools["retag"].description == "PATCH /tags"


def test_title_is_the_humanised_operation_id(crm: Contract) -> None:
    tools = by_name(project_contract(crm))

    assert tools["get_customer"].title == "Get customer by ID"
    assert tools["note_put"].title == "Note (PUT)"
    assert tools["get_customer"].annotations.title == "Get customer by ID"


@pytest.mark.parametrize(
    ("identifier", "title"),
    [
        ("searchCustomers", "Search customers"),
        ("search_customers", "Search customers"),
        ("getHTTPStatus", "Get HTTP status"),
        ("listV2Items", "List V2 items"),
        ("_private", "Private"),
    ],
)
def test_humanize(identifier: str, title: str) -> None:
    assert humanize(identifier) == title


# (tool, side effects, read_only, destructive, idempotent, open_world, determinism)
ANNOTATION_TABLE = [
    ("validate_email", SideEffects.NONE, True, False, True, False, Determinism.PURE),
    ("search_customers", SideEffects.READ, True, False, True, True, Determinism.IDEMPOTENT),
    ("create_customer", SideEffects.WRITE, False, False, False, True, Determinism.SIDE_EFFECTFUL),
    ("replace_customer", SideEffects.WRITE, False, False, True, True, Determinism.IDEMPOTENT),
    ("delete_customer", SideEffects.DESTRUCTIVE, False, True, True, True, Determinism.IDEMPOTENT),
    ("merge_customer", SideEffects.DESTRUCTIVE, False, True, False, True, Determinism.SIDE_EFFECTFUL),
    # no llm block: the HTTP method decides
    ("health", SideEffects.READ, True, False, True, True, Determinism.IDEMPOTENT),
    ("end_session", SideEffects.DESTRUCTIVE, False, True, True, True, Determinism.IDEMPOTENT),
    ("retag", SideEffects.WRITE, False, False, False, True, Determinism.SIDE_EFFECTFUL),
    ("note_get", SideEffects.READ, True, False, True, True, Determinism.IDEMPOTENT),
    ("note_put", SideEffects.WRITE, False, False, True, True, Determinism.IDEMPOTENT),
]


@pytest.mark.parametrize(
    ("name", "effects", "read_only", "destructive", "idempotent", "open_world", "determinism"),
    ANNOTATION_TABLE,
)
def test_annotations_and_determinism_follow_side_effects(
    crm: Contract,
    name: str,
    effects: SideEffects,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    determinism: Determinism,
) -> None:
    tool = by_name(project_contract(crm))[name]

    assert tool.side_effects is effects
    assert tool.determinism is determinism
    hints = tool.to_mcp().annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
        read_only,
        destructive,
        idempotent,
        open_world,
    )


def test_meta_carries_typed_facts(crm: Contract) -> None:
    tools = by_name(project_contract(crm))

    delete = tools["delete_customer"].to_mcp().meta or {}
    assert delete["colonnade/canonical_name"] == "acme:crm:delete_customer"
    assert delete["colonnade/side_effects"] == "destructive"
    assert delete["colonnade/safe_for_agents"] is False
    assert delete["colonnade/requires_human_approval"] is True
    assert delete["colonnade/contract_version"] == "1.0.0"
    assert delete["colonnade/determinism"] == "idempotent"
    assert delete["colonnade/digest"] == tools["delete_customer"].digest


def test_gating_without_llm_is_conservative(crm: Contract) -> None:
    tools = by_name(project_contract(crm))

    assert (tools["health"].safe_for_agents, tools["health"].requires_human_approval) == (True, False)
    assert (tools["retag"].safe_for_agents, tools["retag"].requires_human_approval) == (False, False)
    end = tools["end_session"]
    assert (end.safe_for_agents, end.requires_human_approval) == (False, True)


def test_shown_input_schema_has_no_binding_keywords_but_binding_keeps_them(crm: Contract) -> None:
    tool = by_name(project_contract(crm))["get_customer"]

    assert tool.input_schema["properties"] == {
        "customer_id": {"type": "string"},
        "request_id": {"type": "string"},
    }
    assert "x-in" not in json.dumps(tool.to_mcp().model_dump(by_alias=True))
    assert tool.binding is not None
    header = tool.binding.param("request_id")
    assert header is not None
    assert (header.location, header.wire_name) == (ParamLocation.HEADER, "X-Request-Id")
    assert tool.binding.base_url == "http://127.0.0.1:8766"
    # the contract itself is untouched
    schema = crm.endpoints[1].input_schema or {}
    assert schema["properties"]["request_id"]["x-name"] == "X-Request-Id"


def test_output_schema_is_kept_and_derived_input_schema_used_without_one(crm: Contract) -> None:
    tools = by_name(project_contract(crm))

    assert tools["get_customer"].output_schema == crm.endpoints[1].output_schema
    assert tools["create_customer"].output_schema is None
    assert tools["replace_customer"].input_schema == {
        "type": "object",
        "properties": {"customer_id": {"type": "string"}},
        "required": ["customer_id"],
        "additionalProperties": False,
    }


def test_to_mcp_wire_form(crm: Contract) -> None:
    tool = by_name(project_contract(crm))["search_customers"]
    wire = tool.to_mcp().model_dump(by_alias=True, exclude_none=True)

    assert wire["name"] == "acme__crm__search_customers"
    assert wire["title"] == "Search customers"
    assert wire["inputSchema"]["required"] == ["q"]
    assert wire["outputSchema"] == {"type": "object", "properties": {"customers": {"type": "array"}}}
    assert wire["annotations"]["readOnlyHint"] is True
    assert wire["_meta"]["colonnade/canonical_name"] == "acme:crm:search_customers"


def test_projection_is_deterministic_and_digest_tracks_content(crm_data: dict[str, Any]) -> None:
    first = project_contract(Contract.model_validate(crm_data))
    again = project_contract(Contract.model_validate(crm_data))
    assert first == again
    assert [t.digest for t in first] == [t.digest for t in again]
    assert len({t.digest for t in first}) == len(first)

    crm_data["endpoints"][0]["llm"]["summary"] = "Find customers"
    changed = project_contract(Contract.model_validate(crm_data))
    assert changed[0].digest != first[0].digest
    assert [t.digest for t in changed[1:]] == [t.digest for t in first[1:]]


def test_digest_ignores_key_order_of_schemas(crm_data: dict[str, Any]) -> None:
    before = project_contract(Contract.model_validate(crm_data))[0].digest
    schema = crm_data["endpoints"][0]["input_schema"]
    crm_data["endpoints"][0]["input_schema"] = dict(reversed(list(schema.items())))

    assert project_contract(Contract.model_validate(crm_data))[0].digest == before


def test_two_operations_with_one_tool_name_are_refused(crm_data: dict[str, Any]) -> None:
    crm_data["endpoints"][2]["llm"]["tool_name"] = "search_customers"

    with pytest.raises(DuplicateToolName) as caught:
        project_contract(Contract.model_validate(crm_data))
    message = str(caught.value)
    assert "GET /customers (/endpoints/0)" in message
    assert "POST /customers (/endpoints/2)" in message
    assert "llm.tool_name" in caught.value.fix


@pytest.mark.skipif(not EXAMPLES, reason="examples/contracts/*.yaml not written yet")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_contracts_project_cleanly(path: Path) -> None:
    contract = Contract.model_validate(load_document(path).data)
    tools = project_contract(contract)

    assert len(tools) == sum(1 for op in contract.operations() if op.endpoint.mcp)
    for tool, op in zip(tools, [op for op in contract.operations() if op.endpoint.mcp], strict=True):
        assert wire_name_pattern("strict").match(tool.wire_name)
        assert from_wire(tool.wire_name) == tool.canonical_name == op.canonical_name
        if op.endpoint.llm is not None:
            assert op.endpoint.llm.summary in tool.description
            assert op.endpoint.llm.intent in tool.description
        dumped = json.dumps(tool.to_mcp().model_dump(by_alias=True))
        assert '"x-in"' not in dumped
        assert '"x-name"' not in dumped


def test_an_endpoints_own_backend_url_replaces_the_contracts_base_url() -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "contracts" / "adr_customer.json"
    data = load_document(fixture).data
    data["endpoints"].append({**data["endpoints"][0], "path": "/other/{id}", "operation_id": "other"})
    del data["endpoints"][1]["backend_url"], data["endpoints"][1]["llm"]
    own, inherited = project_contract(Contract.model_validate(data))
    assert own.binding is not None and inherited.binding is not None
    assert own.binding.base_url == "https://backend.example.com/customers"
    assert inherited.binding.base_url == "https://api.example.com"
    assert own.binding.path == "/customers/{id}"
