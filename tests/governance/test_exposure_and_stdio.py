"""Where an unauthenticated gateway may listen (loopback only), and who calls over stdio (the
configured local principal, under the same authorization as HTTP callers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from joserfc.jwk import ECKey
from mcp import Client

from colonnade.catalog.catalog import Catalog
from colonnade.config import AuthSettings, IssuerSettings, LocalPrincipalSettings, ServerSettings, Settings
from colonnade.governance.identity.exposure import AuthConfigError, AuthNotConfigured
from colonnade.runtime.gateway import Gateway
from tests.support.loopback import free_port
from tests.support.tenant_contracts import tenant_contract

COLONNADE = Path(sys.executable).with_name("colonnade")
KEY = ECKey.generate_key("P-256", auto_kid=True)
ISSUER = IssuerSettings(
    issuer="https://idp.example", keys=[dict(KEY.as_dict(private=False))], algorithms=["ES256"]
)


async def test_an_unauthenticated_gateway_refuses_to_listen_beyond_loopback() -> None:
    for host in ("0.0.0.0", "192.0.2.10", "::"):
        gateway = Gateway(Settings(server=ServerSettings(host=host), manifests_dir=None))
        with pytest.raises(AuthNotConfigured, match="loopback"):
            gateway.http_app()
        await gateway.aclose()
    for host in ("127.0.0.1", "::1", "localhost"):
        gateway = Gateway(Settings(server=ServerSettings(host=host), manifests_dir=None))
        gateway.http_app()
        await gateway.aclose()


async def test_an_authenticated_gateway_beyond_loopback_needs_its_public_url() -> None:
    exposed = ServerSettings(host="0.0.0.0")
    with pytest.raises(AuthConfigError, match=r"auth\.resource"):
        Gateway(Settings(server=exposed, auth=AuthSettings(issuers=[ISSUER]), manifests_dir=None))
    auth = AuthSettings(issuers=[ISSUER], resource="https://gw.example.com/mcp")
    gateway = Gateway(Settings(server=exposed, auth=auth, manifests_dir=None))
    gateway.http_app()
    await gateway.aclose()


def test_serve_says_why_it_will_not_listen(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(COLONNADE), "serve", "--host", "0.0.0.0", "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "COLONNADE_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"},
    )
    assert run.returncode == 2 and "A-AUTH-NOT-CONFIGURED" in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("local", "expected"),
    [
        (LocalPrincipalSettings(), {"acme", "globex"}),
        (LocalPrincipalSettings(id="ops", tenant="acme", persona="admin"), {"acme"}),
        # a consumer lists only the APIs it has subscribed to (none here): tools it can call now
        (LocalPrincipalSettings(id="bob", tenant="globex", persona="consumer"), set()),
    ],
)
async def test_stdio_runs_as_the_configured_local_principal(
    local: LocalPrincipalSettings, expected: set[str]
) -> None:
    catalog = Catalog()
    for tenant in ("acme", "globex"):
        catalog.publish(tenant_contract(tenant, "items", "http://127.0.0.1:9"))
    settings = Settings(auth=AuthSettings(issuers=[ISSUER]), local_principal=local, manifests_dir=None)
    gateway = Gateway(settings, catalog=catalog)
    try:
        async with Client(gateway.mcp.server) as client:
            listed = await client.list_tools()
            tenants = {str((t.meta or {})["colonnade/canonical_name"]).split(":")[0] for t in listed.tools}
            assert tenants - {"colonnade"} == expected
            result = await client.call_tool("acme__items__drop_item", {"item_id": "I-1"})
            code = (result.meta or {})["colonnade/result"]["error"]["code"]
            assert code == ("P-PRECOND-APPROVAL-REQUIRED" if "acme" in expected else "I-REQ-UNKNOWN-TOOL")
    finally:
        await gateway.aclose()
