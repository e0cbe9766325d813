"""ADR-012's persona matrix over a real MCP client in both protocol eras: each persona lists exactly
the core tools the matrix gives it (an agent: those also on its allow-list), and every write tool
refuses a caller that may only read, without changing anything."""

from __future__ import annotations

import pytest

from colonnade.governance.personas import PERSONA_SCOPES, Persona, Scope
from colonnade.platform import CORE_TOOLS
from colonnade.platform.core_tool import WIRE_PREFIX
from tests.support.governed import Governed
from tests.support.mcp_client import all_tools
from tests.support.platform_personas import AGENT_ALLOWS, persona_token

MODES = ("auto", "legacy")
_GATEWAY_META = {"colonnade__commit_call", "colonnade__discard_call", "colonnade__record_skip"}


def expected_core(persona: Persona) -> set[str]:
    return {
        core.wire_name
        for core in CORE_TOOLS
        if persona in core.personas and (persona is not Persona.AGENT or core.canonical_name in AGENT_ALLOWS)
    }


def test_the_matrix_is_not_empty_for_anyone_and_full_for_admins() -> None:
    assert expected_core(Persona.ADMIN) == {core.wire_name for core in CORE_TOOLS}
    for persona in Persona:
        assert expected_core(persona), persona
    # the agent's allow-list names get_config, which the matrix never shows an agent
    assert "colonnade__get_config" not in expected_core(Persona.AGENT)
    assert expected_core(Persona.AGENT) == {"colonnade__list_apis", "colonnade__get_api"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("persona", list(Persona))
async def test_each_persona_lists_exactly_its_core_tools(
    governed: Governed, persona: Persona, mode: str
) -> None:
    async with governed.mcp(persona_token(governed, persona), mode=mode) as client:
        listed = {tool.name for tool in await all_tools(client)}
    core = {name for name in listed if name.startswith(WIRE_PREFIX)} - _GATEWAY_META
    assert core == expected_core(persona)
    assert "search_tools" in listed  # ADR-012's "search tools": the discovery tool, open to every caller


@pytest.mark.parametrize("persona", list(Persona))
def test_each_persona_may_call_what_it_sees_and_nothing_else(governed: Governed, persona: Persona) -> None:
    token = persona_token(governed, persona)
    for core in CORE_TOOLS:
        if core.name not in ("platform_info", "list_apis", "get_config", "security_score", "get_metrics"):
            continue  # tools without required arguments: the others are called in test_core_tool_calls
        _, body = governed.call(token, core.wire_name)
        if core.wire_name in expected_core(persona):
            assert body["status"] == "success", (persona, core.name, body)
        else:
            assert body["error"]["code"] == "I-REQ-UNKNOWN-TOOL", (persona, core.name, body)


WRITES = [core for core in CORE_TOOLS if core.writes]


@pytest.mark.parametrize("persona", [Persona.AGENT, Persona.SECURITY])
def test_every_write_tool_refuses_a_read_only_persona(governed: Governed, persona: Persona) -> None:
    token, admin = persona_token(governed, persona), persona_token(governed, Persona.ADMIN)
    before = governed.call(admin, "colonnade__platform_info")[1]["output"]["catalog_version"]
    for core in WRITES:
        if persona in core.personas:  # a security officer rotates keys: refused for its read-only token below
            continue
        _, body = governed.call(token, core.wire_name, **_write_arguments(core.name))
        assert body["error"]["code"] == "I-REQ-UNKNOWN-TOOL", (core.name, body)
    assert governed.call(admin, "colonnade__platform_info")[1]["output"]["catalog_version"] == before


def test_every_write_tool_refuses_a_token_that_may_only_read(governed: Governed) -> None:
    reads = frozenset(scope for scope in PERSONA_SCOPES[Persona.ADMIN] if not scope.endswith(":write"))
    token = governed.token(Persona.ADMIN, sub="reader-admin", scopes=reads)
    assert Scope.CATALOG_WRITE not in reads
    for core in WRITES:
        _, body = governed.call(token, core.wire_name, **_write_arguments(core.name))
        assert body["error"]["code"] == "A-AUTH-FORBIDDEN", (core.name, body)
        assert core.name in body["error"]["message"]
    with governed.rest(persona_token(governed, Persona.ADMIN)) as client:
        assert client.get("/v1/subscriptions").json()["subscriptions"] == []


def _write_arguments(name: str) -> dict[str, object]:
    """Valid arguments of each write tool, so that only authorization can refuse the call."""
    return {
        "create_api": {"contract": {"name": "x"}},
        "deploy_api": {"api": "acme:items", "version": "1.0.0", "environment": "prod"},
        "undeploy_api": {"api": "acme:items"},
        "deprecate_api": {"api": "acme:items", "version": "1.0.0"},
        "create_subscription": {"api": "acme:items"},
        "update_subscription": {"subscription_id": "sub_x", "decision": "approve"},
        "revoke_subscription": {"subscription_id": "sub_x"},
        "rotate_api_key": {"key_id": "k_x"},
    }[name]
