"""Imported real-world APIs become tools every MCP era accepts: `tools/list` must not fail as a whole.

One non-object `outputSchema` (petstore's `findPetsByStatus` returns an array, `loginUser` a
string) once made the 2025-11-25 `tools/list` answer `-32603 Handler returned an invalid result`:
no tool at all was listed. The server runs exactly this validation before it answers.
"""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp_types import methods

from colonnade.catalog import project_contract
from colonnade.contracts.load import load_document
from colonnade.contracts.model import Contract
from colonnade.contracts.openapi import import_openapi

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openapi"
DOCUMENTS = {"petstore_public.yaml": "https://petstore3.example.com/api/v3", "spotify_like.yaml": None}
ERAS = ("2025-11-25", "2026-07-28")


def _tools(name: str) -> list[types.Tool]:
    data = import_openapi(load_document(FIXTURES / name).data, tenant="acme", base_url=DOCUMENTS[name])
    return [tool.to_mcp() for tool in project_contract(Contract.model_validate(data.contract_data))]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_imported_tool_is_listed_in_both_eras(name: str, era: str) -> None:
    tools = _tools(name)
    listing = types.ListToolsResult(tools=tools).model_dump(by_alias=True, mode="json", exclude_none=True)
    served = methods.serialize_server_result("tools/list", era, listing)
    assert len(served["tools"]) == len(tools)
    for tool in served["tools"]:
        assert tool.get("outputSchema", {"type": "object"})["type"] == "object", tool["name"]


def test_array_and_string_results_are_declared_wrapped() -> None:
    by_name = {tool.name: tool for tool in _tools("petstore_public.yaml")}
    find = by_name["acme__swagger-petstore-openapi-3-0__find_pets_by_status"].output_schema
    login = by_name["acme__swagger-petstore-openapi-3-0__login_user"].output_schema
    assert find is not None and login is not None
    assert find["properties"]["result"]["type"] == "array"
    assert login["properties"]["result"] == {"type": "string"}
    assert find["required"] == login["required"] == ["result"]
