"""A downstream server's tools become catalog records: names, side effects, overrides, filters."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from colonnade.catalog.bindings import McpBinding
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.mcp_projection import UNVERSIONED, project_server_tools, source_id
from colonnade.config import McpServerSettings
from colonnade.contracts.model import SideEffects


def server(**fields: Any) -> McpServerSettings:
    return McpServerSettings.model_validate(
        {"name": "files", "transport": "stdio", "command": "fs", **fields}
    )


def tool(name: str, **hints: Any) -> types.Tool:
    return types.Tool(
        name=name,
        description=f"{name} does things",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        output_schema={"type": "object"},
        annotations=types.ToolAnnotations(**hints) if hints else None,
    )


@pytest.mark.parametrize(
    ("hints", "effects"),
    [
        ({"destructive_hint": True, "read_only_hint": False}, SideEffects.DESTRUCTIVE),
        ({"read_only_hint": True}, SideEffects.READ),
        ({"read_only_hint": False, "destructive_hint": False}, SideEffects.WRITE),
        ({}, SideEffects.WRITE),
    ],
)
def test_side_effects_follow_the_annotations(hints: dict[str, Any], effects: SideEffects) -> None:
    (projected,) = project_server_tools(server(), [tool("t", **hints)])
    assert projected.side_effects is effects
    assert projected.annotations.read_only is (effects is SideEffects.READ)
    assert projected.annotations.destructive is (effects is SideEffects.DESTRUCTIVE)
    assert projected.requires_human_approval is (effects is SideEffects.DESTRUCTIVE)


def test_names_schemas_and_binding_of_a_projected_tool() -> None:
    settings = server(tenant="acme", call_timeout_s=7)
    (projected,) = project_server_tools(settings, [tool("read.file", read_only_hint=True)], version="2.1.0")
    assert projected.canonical_name == "acme:files:read.file"
    assert projected.wire_name == "acme__files__read_file"
    assert projected.input_schema == {"type": "object", "properties": {"path": {"type": "string"}}}
    assert projected.output_schema == {"type": "object"}
    assert (projected.version, projected.source, projected.adapter) == ("2.1.0", "mcp", "mcp")
    assert projected.binding == McpBinding("files", "read.file", "stdio", None, timeout_ms=7000)
    assert projected.runtime.timeout_ms_default == 7000


def test_the_operators_overrides_win() -> None:
    settings = server(
        tools={
            "wipe": {
                "description": "Deletes everything.",
                "side_effects": "read",
                "requires_human_approval": True,
            }
        }
    )
    (projected,) = project_server_tools(settings, [tool("wipe", destructive_hint=True)])
    assert projected.description == "Deletes everything."
    assert projected.side_effects is SideEffects.READ and projected.annotations.read_only
    assert projected.requires_human_approval is True


def test_allow_and_deny_lists_decide_what_is_served() -> None:
    tools = [tool("read_file"), tool("read_dir"), tool("write_file"), tool("move_file")]
    allowed = project_server_tools(
        server(allow_tools=["read_*", "write_file"], deny_tools=["read_dir"]), tools
    )
    assert [t.operation for t in allowed] == ["read_file", "write_file"]
    denied = project_server_tools(server(deny_tools=["*_file"]), tools)
    assert [t.operation for t in denied] == ["read_dir"]


@pytest.mark.parametrize("version", [None, "", "1.0", "v2"])
def test_a_server_without_a_semantic_version_is_unversioned(version: str | None) -> None:
    (projected,) = project_server_tools(server(), [tool("t")], version=version)
    assert projected.version == UNVERSIONED


def test_a_server_is_one_catalog_source() -> None:
    catalog = Catalog()
    catalog.add_tools(source_id("files"), project_server_tools(server(), [tool("a"), tool("b")]))
    assert catalog.get("default__files__a") is not None and len(catalog) == 2
    catalog.add_tools(source_id("files"), project_server_tools(server(), [tool("b")]))
    assert [t.operation for t in catalog.tools()] == ["b"]
