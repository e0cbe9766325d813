"""A server named like a contract's API: its tools would join that API's namespace, so it is said."""

from __future__ import annotations

import mcp_types as types
import yaml

from colonnade.catalog.catalog import Catalog
from colonnade.config import McpServerSettings
from colonnade.contracts.model import Contract
from colonnade.runtime.servers import Servers
from tests.support.repo import ROOT

TOOLS = (types.Tool(name="get_current_time", input_schema={"type": "object"}),)


def _served(catalog: Catalog, tenant: str, name: str) -> tuple[Servers, list[str]]:
    servers = Servers(catalog)
    upstream = servers.configure(McpServerSettings(name=name, tenant=tenant, transport="stdio", command="t"))
    upstream.accept_tools(TOOLS)
    return servers, upstream.status().warnings


def test_a_server_in_a_contracts_api_namespace_gets_a_warning() -> None:
    catalog = Catalog()
    crm = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    catalog.publish(Contract.model_validate(crm))
    _, warnings = _served(catalog, "acme", "crm")
    assert warnings == [
        "acme:crm is also the API of a contract (acme/crm 1.0.0): this server's tools are served in its"
        " namespace (its policies, subscriptions and pages); give the server another name or tenant"
    ]
    assert "acme:crm:get_current_time" in catalog
    assert _served(catalog, "acme", "clock")[1] == []
