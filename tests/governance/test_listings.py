"""Tenant isolation in everything that lists or shows tools: MCP tools/list (paged), search and
describe, REST listing and detail, pages; every name form of another tenant's tool is unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from colonnade.catalog.naming import to_wire
from colonnade.cli import app
from tests.support.governed import Governed

ACME_ITEMS = {f"acme:items:{t}" for t in ("read_item", "write_item", "drop_item", "audit_item")}
ACME_LAB = {f"acme:lab:{t}" for t in ("read_item", "write_item", "drop_item", "audit_item")}
GLOBEX = {f"globex:items:{t}" for t in ("read_item", "write_item", "drop_item", "audit_item")}
VIEWERS: dict[str, tuple[dict[str, Any], set[str]]] = {
    "admin-acme": ({"persona": "admin", "tenant": "acme"}, ACME_ITEMS | ACME_LAB),
    "admin-globex": ({"persona": "admin", "tenant": "globex", "sub": "g-admin"}, GLOBEX),
    "developer-team-b": ({"persona": "developer", "tenant": "acme", "team": "team-b", "sub": "dev-b"}, set()),
    "platform-admin": ({"persona": "admin", "tenant": None, "sub": "root"}, ACME_ITEMS | ACME_LAB | GLOBEX),
}


async def _mcp_listing(governed: Governed, token: str) -> list[str]:
    names: list[str] = []
    async with governed.mcp(token) as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            names += [str((t.meta or {})["colonnade/canonical_name"]) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return names


def _rest_listing(governed: Governed, token: str) -> list[str]:
    names: list[str] = []
    with governed.rest(token) as client:
        cursor = ""
        while True:
            page = client.get("/v1/tools", params={"limit": 2, "cursor": cursor}).json()
            names += [tool["canonical_name"] for tool in page["tools"]]
            if not page["next_cursor"]:
                return names
            cursor = page["next_cursor"]


@pytest.mark.parametrize("viewer", sorted(VIEWERS))
async def test_every_listing_shows_exactly_what_the_caller_may_see(governed: Governed, viewer: str) -> None:
    claims, expected = VIEWERS[viewer]
    token = governed.token(**claims)
    listed = await _mcp_listing(governed, token)
    # The gateway's own tools (meta and platform) follow their own matrix: tests/platform checks it.
    own = ("colonnade:gateway:", "colonnade:platform:")
    assert {name for name in listed if not name.startswith(own)} == expected
    assert len(listed) == len(set(listed))  # stable paging over the filtered view: no repeats
    assert set(_rest_listing(governed, token)) == expected
    with governed.rest(token) as client:
        page = client.get("/ui/catalog").text
        for name in ACME_ITEMS | ACME_LAB | GLOBEX:
            assert (f'data-tool="{name}"' in page) == (name in expected)


@pytest.mark.parametrize(
    "name",
    ["globex:items:read_item", to_wire("globex:items:read_item", "strict"), "globex:items:drop_item"],
)
async def test_another_tenants_tool_is_unknown_by_every_name_form_and_surface(
    governed: Governed, name: str
) -> None:
    token = governed.token("admin", tenant="acme")
    hits = len(governed.backend_hits())
    with governed.rest(token) as client:
        detail = client.get(f"/v1/tools/{name}")
        assert detail.status_code == 404 and detail.json()["error"]["code"] == "I-REQ-UNKNOWN-TOOL"
        assert "globex" not in str(detail.json()["error"]["details"]["did_you_mean"])
        assert client.get(f"/ui/tools/{name}").status_code == 404
        for envelope in (
            {"tool_id": name},
            {"tool_id": name, "tool_version": "^1.0"},
            {"tool_id": name, "tool_version": "^9.0"},  # a version refusal would confirm it exists
            {"tool_id": name, "tool_version": "not a range"},
            {"tool_id": name, "provenance": {"digest": "0" * 64}},
        ):
            result = client.post("/v1/calls", json={**envelope, "input": {"item_id": "I-1"}}).json()
            assert result["error"]["code"] == "I-REQ-UNKNOWN-TOOL", (envelope, result)
            assert "globex" not in str(result["error"].get("details", {}).get("did_you_mean", ""))
    async with governed.mcp(token) as client:
        called = await client.call_tool(to_wire(name, "strict") if ":" in name else name, {"item_id": "I-1"})
        assert called.is_error and "I-REQ-UNKNOWN-TOOL" in str(called.content[0])
        described = await client.call_tool("describe_tool", {"name": name})
        assert described.is_error and "I-REQ-UNKNOWN-TOOL" in str(described.content[0])
        found = await client.call_tool("search_tools", {"query": "read item of the test backend", "k": 50})
        assert not any(
            card["canonical_name"].startswith("globex:") for card in (found.structured_content or {})["tools"]
        )
    assert len(governed.backend_hits()) == hits


async def test_a_refused_call_offers_no_hidden_names(governed: Governed) -> None:
    token = governed.token("admin", tenant="globex", sub="g-admin")
    result = governed.call(token, "acme:items:read_itme", item_id="I-1")[1]
    assert result["error"]["code"] == "I-REQ-UNKNOWN-TOOL"
    suggested = result["error"]["details"].get("did_you_mean", [])
    assert all(name.startswith("globex") for name in suggested)
    assert "acme:items:read_item" not in result["error"]["message"]
    near = governed.call(token, "globex:items:read_itme", item_id="I-1")[1]
    assert "globex:items:read_item" in near["error"]["details"]["did_you_mean"]


def test_the_cli_lists_only_what_its_credential_may_see(governed: Governed, tmp_path: Path) -> None:
    env = {"COLONNADE_TOKEN": governed.token("admin", tenant="globex", sub="g-admin"), "COLUMNS": "250"}
    env["COLONNADE_DATA_DIR"] = str(tmp_path)
    listed = CliRunner().invoke(app, ["tools", "list", "--url", governed.base_url, "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    assert {tool["canonical_name"] for tool in json.loads(listed.output)} == GLOBEX
    env["COLONNADE_TOKEN"] = "not-a-token"
    refused = CliRunner().invoke(app, ["tools", "list", "--url", governed.base_url], env=env)
    assert refused.exit_code == 2 and "A-AUTH-MALFORMED" in refused.output


def test_the_cli_search_asks_the_gateway_and_ranks_only_what_its_credential_may_see(
    governed: Governed, tmp_path: Path
) -> None:
    """Nothing is configured here (a local ranking would find an empty catalog): the gateway ranks."""
    env = {"COLONNADE_TOKEN": governed.token("admin", tenant="globex", sub="g-admin"), "COLUMNS": "250"}
    env["COLONNADE_DATA_DIR"] = str(tmp_path)
    command = ["tools", "search", "read an item of the test backend", "--k", "50", "--url", governed.base_url]
    found = CliRunner().invoke(app, [*command, "--json"], env=env)
    assert found.exit_code == 0, found.output
    ranking = json.loads(found.output)
    assert ranking["tools"] and {tool["canonical_name"] for tool in ranking["tools"]} <= GLOBEX
    assert (
        ranking["ranked_by"] == f"the gateway at {governed.base_url}: the tools it serves to this credential"
    )
    table = CliRunner().invoke(app, command, env=env)
    assert table.exit_code == 0 and "globex__items__read_item" in table.output
    assert f"ranked by the gateway at {governed.base_url}" in " ".join(table.output.split())
    env["COLONNADE_TOKEN"] = "not-a-token"
    refused = CliRunner().invoke(app, command, env=env)
    assert refused.exit_code == 2 and "A-AUTH-MALFORMED" in refused.output and "--local" in refused.output


def test_the_gateway_client_commands_send_the_credential_to_the_configured_port(
    governed: Governed, tmp_path: Path
) -> None:
    """status, servers and tools list find the gateway at server.port and send --token / COLONNADE_TOKEN."""
    port = governed.base_url.rsplit(":", 1)[1]
    env = {"COLONNADE_TOKEN": governed.token("admin", tenant=None), "COLUMNS": "250"}
    env |= {"COLONNADE_DATA_DIR": str(tmp_path), "COLONNADE_SERVER__PORT": port}
    for command in (["status", "--json"], ["servers", "list", "--json"], ["tools", "list", "--json"]):
        answer = CliRunner().invoke(app, command, env=env)
        assert answer.exit_code == 0, (command, answer.output)
        assert "A-AUTH" not in answer.output and json.loads(answer.output) is not None
    missing = CliRunner().invoke(app, ["servers", "status", "nope"], env=env)
    assert missing.exit_code == 1 and "A-AUTH" not in missing.output, missing.output
