"""A contract's bare `llm.tool_name` names its tool wherever a tool name is taken, when it is unambiguous.

The demo CRM is published twice (`acme:crm` and `acme:crm-eu`), so `get_customer` is borne by two
tools while `get_invoice` is borne by one. Over REST (calls and `GET /v1/tools/{name}`), over MCP
with the official client in both eras (tools/call and `describe_tool`), and for a caller who may
see one of the twins only. Unknown names get "did you mean" on both surfaces.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client

from colonnade.catalog.catalog import Catalog
from colonnade.config import RoutingSettings, Settings
from colonnade.contracts.model import Contract
from colonnade.governance.authorization import Authorizer
from colonnade.runtime.gateway import Gateway
from colonnade.surfaces.mcp.render import RESULT_META_KEY
from tests.support.authorizers import OnlyPrefix
from tests.surfaces.conftest import demo_contract
from tests.surfaces.rest_harness import RunningGateway, demo_contract_file, gateway_settings, serve_gateway

MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]
TWINS = [
    {"canonical_name": "acme:crm-eu:get_customer", "wire_name": "acme__crm-eu__get_customer"},
    {"canonical_name": "acme:crm:get_customer", "wire_name": "acme__crm__get_customer"},
]


# -- REST ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest(backend_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    folder = tmp_path_factory.mktemp("aliases")
    contracts = [demo_contract_file(folder, name, backend_url) for name in ("crm", "billing")]
    twin = yaml.safe_load(contracts[0].read_text(encoding="utf-8"))
    contracts.append(folder / "crm-eu.yaml")
    contracts[-1].write_text(yaml.safe_dump({**twin, "name": "crm-eu"}), encoding="utf-8")
    with serve_gateway(gateway_settings(folder / "data", contracts)) as running:
        yield running


def _call(client: httpx2.Client, tool_id: str, **arguments: Any) -> dict[str, Any]:
    response = client.post("/v1/calls", json={"tool_id": tool_id, "input": arguments})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_rest_calls_a_tool_by_its_bare_name(rest: RunningGateway) -> None:
    result = _call(rest.client, "get_invoice", invoice_id="INV-2001")
    assert result["status"] == "success", result["error"]
    assert result["provenance"]["tool_id"] == "acme:billing:get_invoice"
    assert result["output"]["id"] == "INV-2001"


def test_rest_refuses_an_ambiguous_bare_name_with_the_candidates(rest: RunningGateway) -> None:
    result = _call(rest.client, "get_customer", customer_id="C-1001")
    assert result["status"] == "invalid_request"
    assert result["error"]["code"] == "I-REQ-AMBIGUOUS-TOOL"
    assert result["error"]["details"]["candidates"] == TWINS
    assert "canonical name" in result["error"]["fix"]


def test_rest_tool_detail_by_bare_name(rest: RunningGateway) -> None:
    detail = rest.client.get("/v1/tools/get_invoice")
    assert detail.status_code == 200
    assert detail.json()["canonical_name"] == "acme:billing:get_invoice"
    ambiguous = rest.client.get("/v1/tools/get_customer")
    assert ambiguous.status_code == 400
    assert ambiguous.json()["error"]["code"] == "I-REQ-AMBIGUOUS-TOOL"
    assert ambiguous.json()["error"]["details"]["candidates"] == TWINS


def test_rest_unknown_names_get_did_you_mean(rest: RunningGateway) -> None:
    typo = _call(rest.client, "acme__billing__get_invoices", invoice_id="INV-2001")
    assert typo["error"]["code"] == "I-REQ-UNKNOWN-TOOL"
    assert "acme__billing__get_invoice" in typo["error"]["details"]["did_you_mean"]
    bare = _call(rest.client, "get_invoices", invoice_id="INV-2001")
    assert bare["error"]["details"]["did_you_mean"][0] == "get_invoice"
    assert "did you mean 'get_invoice'" in bare["error"]["message"]
    twins = _call(rest.client, "get_customers")
    suggested = set(twins["error"]["details"]["did_you_mean"])
    assert {"acme:crm:get_customer", "acme:crm-eu:get_customer"} <= suggested


# -- MCP -----------------------------------------------------------------------------------------


async def _gateway(backend_url: str, authorizer: Authorizer | None = None) -> Gateway:
    catalog = Catalog()
    for name in ("crm", "billing"):
        catalog.publish(demo_contract(name, backend_url))
    twin = demo_contract("crm", backend_url).model_dump()
    catalog.publish(Contract.model_validate({**twin, "name": "crm-eu"}))
    return Gateway(Settings(routing=RoutingSettings(enabled=True)), catalog=catalog, authorizer=authorizer)


@pytest.fixture
async def gateway(backend_url: str) -> AsyncIterator[Gateway]:
    built = await _gateway(backend_url)
    yield built
    await built.aclose()


@pytest.fixture
async def eu_only(backend_url: str) -> AsyncIterator[Gateway]:
    built = await _gateway(backend_url, OnlyPrefix("acme:crm-eu:"))
    yield built
    await built.aclose()


def _envelope(result: types.CallToolResult) -> dict[str, Any]:
    return dict(dict(result.meta or {})[RESULT_META_KEY])


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_calls_and_describes_a_tool_by_its_bare_name(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.mcp.server, mode=mode) as client:  # type: ignore[arg-type]
        called = await client.call_tool("get_invoice", {"invoice_id": "INV-2001"})
        described = await client.call_tool("describe_tool", {"name": "get_invoice"})
    assert called.is_error is False, called.content
    assert _envelope(called)["provenance"]["tool_id"] == "acme:billing:get_invoice"
    assert isinstance(called.structured_content, dict) and called.structured_content["id"] == "INV-2001"
    assert described.is_error is False, described.content
    assert isinstance(described.structured_content, dict)
    assert described.structured_content["canonical_name"] == "acme:billing:get_invoice"


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_refuses_an_ambiguous_bare_name_with_the_candidates(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.mcp.server, mode=mode) as client:  # type: ignore[arg-type]
        called = await client.call_tool("get_customer", {"customer_id": "C-1001"})
        described = await client.call_tool("describe_tool", {"name": "get_customer"})
    for result in (called, described):
        assert result.is_error is True
        error = _envelope(result)["error"]
        assert error["code"] == "I-REQ-AMBIGUOUS-TOOL"
        assert error["details"]["candidates"] == TWINS
    text = called.content[0]
    assert isinstance(text, types.TextContent) and "acme:crm-eu:get_customer" in text.text


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_a_bare_name_is_unique_among_what_the_caller_may_see(eu_only: Gateway, mode: str) -> None:
    async with Client(eu_only.mcp.server, mode=mode) as client:  # type: ignore[arg-type]
        called = await client.call_tool("get_customer", {"customer_id": "C-1001"})
        hidden = await client.call_tool("get_invoice", {"invoice_id": "INV-2001"})
    assert called.is_error is False, called.content
    assert _envelope(called)["provenance"]["tool_id"] == "acme:crm-eu:get_customer"
    assert _envelope(hidden)["error"]["code"] == "I-REQ-UNKNOWN-TOOL"  # borne by a tool it may not see


@pytest.mark.parametrize("mode", MODES)
async def test_mcp_unknown_names_get_did_you_mean(gateway: Gateway, mode: str) -> None:
    async with Client(gateway.mcp.server, mode=mode) as client:  # type: ignore[arg-type]
        typo = await client.call_tool("acme__billing__get_invoices", {"invoice_id": "INV-2001"})
        bare = await client.call_tool("get_invoices", {"invoice_id": "INV-2001"})
        described = await client.call_tool("describe_tool", {"name": "get_invoices"})
    assert _envelope(typo)["error"]["code"] == "I-REQ-UNKNOWN-TOOL"
    assert "acme__billing__get_invoice" in _envelope(typo)["error"]["details"]["did_you_mean"]
    assert _envelope(bare)["error"]["details"]["did_you_mean"][0] == "get_invoice"
    text = typo.content[0]
    assert isinstance(text, types.TextContent) and "did you mean" in text.text
    assert _envelope(described)["error"]["details"]["did_you_mean"][0] == "get_invoice"
