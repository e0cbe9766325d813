"""A downstream server's resources and prompts on a governed `/mcp`, for who may see them.

The conformance reference server (over HTTP, tenant acme) lists resources, a template and prompts.
An administrator of acme sees them on `/mcp` and reads a listed resource and one made from the
template there; a caller of another tenant, who may call none of the server's tools, sees none of
them and cannot read them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.governed import Governed, governed_gateway
from tests.support.mcp_servers import reference_http

pytestmark = pytest.mark.e2e

STATIC = "test://static-text"


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    tmp: Path = tmp_path_factory.mktemp("aggregate-resources")
    with reference_http(tmp / "reference.log") as url:
        entry = {"name": "ref", "tenant": "acme", "transport": "http", "url": url, "admit": "auto"}
        with governed_gateway(tmp, servers=[entry]) as running:
            yield running


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_servers_resource_is_listed_and_read_beside_the_platforms(
    governed: Governed, mode: str
) -> None:
    async with governed.mcp(governed.token("admin"), mode=mode) as client:
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        read = await client.read_resource(STATIC)
        made = await client.read_resource("test://template/7/data")
        prompt = await client.get_prompt("acme__ref__test_simple_prompt")
    assert STATIC in resources and (resources[STATIC].meta or {})["colonnade/server"] == "ref"
    assert "test://template/{id}/data" in templates and "acme__ref__test_simple_prompt" in prompts
    assert [str(c.uri) for c in read.contents] == [STATIC]
    assert [str(c.uri) for c in made.contents] == ["test://template/7/data"]
    assert prompt.messages


async def test_a_caller_of_another_tenant_sees_none_of_it(governed: Governed) -> None:
    async with governed.mcp(governed.token("admin", tenant="globex", sub="other")) as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource(STATIC)
        with pytest.raises(MCPError, match="no prompt"):
            await client.get_prompt("acme__ref__test_simple_prompt")
    assert STATIC not in uris and not any(name.startswith("acme__ref__") for name in prompts)
