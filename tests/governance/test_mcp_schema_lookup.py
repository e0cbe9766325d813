"""The MCP SDK checks `Mcp-Param-*` headers against a tool's schema before dispatch, by name only;
the gateway answers that lookup only for tools the caller may see, so it tells nothing either."""

from __future__ import annotations

from joserfc.jwk import ECKey

from colonnade.catalog.catalog import Catalog
from colonnade.config import AuthSettings, IssuerSettings, LocalPrincipalSettings, Settings
from colonnade.runtime.gateway import Gateway
from tests.support.tenant_contracts import tenant_contract

KEY = ECKey.generate_key("P-256", auto_kid=True)


async def test_schemas_of_hidden_tools_are_not_looked_up() -> None:
    catalog = Catalog()
    for tenant in ("acme", "globex"):
        catalog.publish(tenant_contract(tenant, "items", "http://127.0.0.1:9"))
    issuer = IssuerSettings(
        issuer="https://idp.example", keys=[dict(KEY.as_dict(private=False))], algorithms=["ES256"]
    )
    settings = Settings(
        auth=AuthSettings(issuers=[issuer]),
        local_principal=LocalPrincipalSettings(id="ops", tenant="acme"),
        manifests_dir=None,
    )
    gateway = Gateway(settings, catalog=catalog)
    try:
        lookup = gateway.mcp.server.get_tool_input_schema
        assert lookup is not None
        assert lookup("acme__items__read_item") is not None
        assert lookup("globex__items__read_item") is None
        assert lookup("globex:items:read_item") is None
    finally:
        await gateway.aclose()
