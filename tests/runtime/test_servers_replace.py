"""A server replaced on another replica: the change's definition replaces the one configured here."""

from __future__ import annotations

from colonnade.catalog.catalog import Catalog
from colonnade.config import McpServerSettings
from colonnade.runtime.servers import Servers
from colonnade.shared_state import Change
from colonnade.shared_state.topics import SERVER_CHANGED


async def test_a_replacement_published_elsewhere_replaces_the_definition_here() -> None:
    servers = Servers(Catalog())  # the pool is not started: nothing connects
    servers.configure(McpServerSettings(name="s", transport="http", url="http://127.0.0.1:9/mcp"))
    fixed = {"name": "s", "transport": "http", "url": "http://127.0.0.1:10/mcp"}
    await servers._on_change(Change(SERVER_CHANGED, {"name": "s", "action": "replace", "definition": fixed}))
    assert [s.url for s in servers.settings()] == ["http://127.0.0.1:10/mcp"]
    refused = {"name": "s", "transport": "http"}  # no url: refused here, the configured one stays
    await servers._on_change(
        Change(SERVER_CHANGED, {"name": "s", "action": "replace", "definition": refused})
    )
    assert [s.url for s in servers.settings()] == ["http://127.0.0.1:10/mcp"]
    absent = {"name": "t", "transport": "http", "url": "http://127.0.0.1:11/mcp"}
    await servers._on_change(Change(SERVER_CHANGED, {"name": "t", "action": "replace", "definition": absent}))
    assert [s.name for s in servers.settings()] == ["s"]  # a replacement adds nothing
    await servers.aclose()
