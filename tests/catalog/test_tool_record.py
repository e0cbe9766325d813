"""The `Tool` record itself: immutability, digest, `_meta` and the MCP wire form of a non-contract tool."""

from __future__ import annotations

import dataclasses

import pytest

from colonnade.catalog import Annotations, Determinism, InvalidCanonicalName, Tool
from colonnade.contracts.model import SideEffects


def make_tool(**changes: object) -> Tool:
    fields: dict[str, object] = {
        "canonical_name": "acme:clock:now",
        "wire_name": "acme__clock__now",
        "title": "Now",
        "description": "The current time.",
        "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}},
        "side_effects": SideEffects.NONE,
        "determinism": Determinism.PURE,
        "annotations": Annotations(read_only=True, destructive=False, idempotent=True, open_world=False),
        "safe_for_agents": True,
        "requires_human_approval": False,
        "version": "2.1.0",
        "operation": "now",
        "source": "mcp:clock",
        "adapter": "mcp",
    }
    fields.update(changes)
    return Tool(**fields)  # type: ignore[arg-type]


def test_a_tool_without_contract_or_binding_renders_for_mcp() -> None:
    tool = make_tool()
    wire = tool.to_mcp().model_dump(by_alias=True, exclude_none=True)

    assert wire["name"] == "acme__clock__now"
    assert "outputSchema" not in wire
    assert wire["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert wire["_meta"] == {
        "colonnade/canonical_name": "acme:clock:now",
        "colonnade/side_effects": "none",
        "colonnade/determinism": "pure",
        "colonnade/safe_for_agents": True,
        "colonnade/requires_human_approval": False,
        "colonnade/contract_version": "2.1.0",
        "colonnade/digest": tool.digest,
    }
    assert (tool.tenant, tool.api, tool.binding, tool.llm) == ("acme", "clock", None, None)


def test_tool_is_frozen_and_hashable() -> None:
    tool = make_tool()

    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.title = "Later"  # type: ignore[misc]
    assert len({tool, make_tool()}) == 1
    assert tool == make_tool()


def test_digest_covers_every_field() -> None:
    base = make_tool().digest

    assert len(base) == 64
    assert make_tool(description="The time now.").digest != base
    assert make_tool(version="2.2.0").digest != base
    assert make_tool(requires_human_approval=True).digest != base
    assert make_tool(input_schema={"type": "object"}).digest != base
    assert make_tool(tags=("time",)).digest != base


def test_replace_recomputes_the_digest() -> None:
    tool = make_tool()
    changed = dataclasses.replace(tool, description="Changed.")

    assert changed.digest == make_tool(description="Changed.").digest
    assert changed.digest != tool.digest


@pytest.mark.parametrize("name", ["acme:clock", "acme::now", ":clock:now", "plain"])
def test_malformed_canonical_name_is_refused(name: str) -> None:
    with pytest.raises(InvalidCanonicalName) as caught:
        make_tool(canonical_name=name)
    assert "tenant:api:tool" in str(caught.value)


def test_empty_wire_name_is_refused() -> None:
    with pytest.raises(ValueError, match="empty wire name"):
        make_tool(wire_name="")
