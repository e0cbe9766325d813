"""The `colonnade://` resources and the prompts on `/mcp`, through the official client in both eras:
each persona lists and reads exactly the resources whose tool ADR-012 gives it, a read is a call of
that tool (audited), and a subscribed resource is updated when a write changes it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from colonnade.governance.audit.readers import AuditFilter
from colonnade.governance.personas import Persona
from colonnade.platform.resources import PLATFORM_RESOURCES
from tests.platform.test_platform_persona_matrix import expected_core
from tests.support.governed import Governed
from tests.support.platform_personas import persona_token

MODES = ("auto", "legacy")
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@contextlib.asynccontextmanager
async def _client(
    governed: Governed, token: str, mode: str, on_message: Callable[[Any], Awaitable[None]] | None = None
) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30.0) as http,
        Client(
            streamable_http_client(governed.mcp_url, http_client=http), mode=mode, message_handler=on_message
        ) as client,  # type: ignore[arg-type]
    ):
        yield client


def _expected(persona: Persona) -> tuple[set[str], set[str]]:
    seen = {r for r in PLATFORM_RESOURCES if f"colonnade__{r.tool}" in expected_core(persona)}
    return {r.uri for r in seen if not r.template}, {r.uri for r in seen if r.template}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("persona", list(Persona))
async def test_each_persona_lists_the_resources_of_its_tools(
    governed: Governed, persona: Persona, mode: str
) -> None:
    async with _client(governed, persona_token(governed, persona), mode) as client:
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert (resources, templates) == _expected(persona)
    assert prompts == {"write_llm_block", "explain_error", "prepare_approval_request"}


def test_the_resources_cover_adr_012s_list() -> None:
    named = {r.adr_name for r in PLATFORM_RESOURCES}
    assert len(named) == 15 and "time series" in named
    assert _expected(Persona.AGENT) == ({"colonnade://apis"}, {"colonnade://apis/{api}"})


@pytest.mark.parametrize("mode", MODES)
async def test_a_read_is_a_call_of_its_tool_within_the_callers_rights(governed: Governed, mode: str) -> None:
    token = persona_token(governed, Persona.CONSUMER, sub=f"reader-{mode}")
    async with _client(governed, token, mode) as client:
        apis = json.loads((await client.read_resource("colonnade://apis")).contents[0].text)  # type: ignore[union-attr]
        one = await client.read_resource("colonnade://apis/acme:items")
        with pytest.raises(MCPError, match="no resource colonnade://metrics"):
            await client.read_resource("colonnade://metrics")  # a consumer does not see metrics
        with pytest.raises(MCPError, match="I-REQ-UNKNOWN-RESOURCE"):
            await client.read_resource("colonnade://apis/globex:items")  # another tenant's
    assert {api["api"] for api in apis["apis"]} >= {"acme:items", "acme:lab"}
    assert not [api for api in apis["apis"] if api["tenant"] != "acme"]
    assert json.loads(one.contents[0].text)["api"] == "acme:items"  # type: ignore[union-attr]
    audit = governed.running.gateway.governance.audit
    assert audit is not None
    records = governed.running.run(audit.store.query(AuditFilter(actor=f"user:reader-{mode}"), 100))
    assert [(r.tool, r.outcome) for r in records] == [
        ("colonnade:platform:list_apis", "success"),
        ("colonnade:platform:get_api", "success"),
        ("colonnade:platform:get_api", "invalid_request"),
    ]


async def test_a_handshake_era_subscriber_hears_its_subscriptions_change(governed: Governed) -> None:
    token = persona_token(governed, Persona.CONSUMER, sub="legacy-watcher")
    updated: list[str] = []
    heard = anyio.Event()

    async def notified(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            if message.params.uri == "colonnade://subscriptions":
                heard.set()

    async with _client(governed, token, "legacy", notified) as client:
        assert (
            client.server_capabilities.resources is not None
            and client.server_capabilities.resources.subscribe
        )
        await client.subscribe_resource("colonnade://subscriptions")
        with pytest.raises(MCPError):
            await client.subscribe_resource("colonnade://security/score")  # not a consumer's
        _, body = governed.call(token, "colonnade__create_subscription", api="acme:items")
        assert body["status"] == "success", body
        with anyio.fail_after(20):
            await heard.wait()
    assert "colonnade://security/score" not in updated


async def test_a_2026_listener_hears_its_subscriptions_change(governed: Governed) -> None:
    token = persona_token(governed, Persona.CONSUMER, sub="modern-watcher")
    async with _client(governed, token, "auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=["colonnade://subscriptions"]) as subscription:
            _, body = governed.call(token, "colonnade__create_subscription", api="acme:lab")
            assert body["status"] == "success", body
            with anyio.fail_after(20):
                event = await anext(aiter(subscription))
    assert event == ResourceUpdated(uri="colonnade://subscriptions")


@pytest.mark.parametrize("mode", MODES)
async def test_the_prompts_render_and_refuse_what_they_cannot(governed: Governed, mode: str) -> None:
    async with _client(governed, persona_token(governed, Persona.DEVELOPER), mode) as client:
        explained = await client.get_prompt("explain_error", {"code": "A-AUTH-SUBSCRIPTION-REQUIRED"})
        drafted = await client.get_prompt("write_llm_block", {"endpoint": "DELETE /items/{id}"})
        asked = await client.get_prompt("prepare_approval_request", {"tool": "acme:items:drop_item"})
        with pytest.raises(MCPError, match="did you mean A-AUTH-SUBSCRIPTION-REQUIRED"):
            await client.get_prompt("explain_error", {"code": "A-AUTH-SUBSCRIPTION-REQUIRE"})
        with pytest.raises(MCPError, match="missing endpoint"):
            await client.get_prompt("write_llm_block", {})
    text = explained.messages[0].content.text  # type: ignore[union-attr]
    assert "subscri" in text.lower() and "Do not retry the same call unchanged" in text
    assert "requires_human_approval" in drafted.messages[0].content.text  # type: ignore[union-attr]
    assert "approval id" in asked.messages[0].content.text  # type: ignore[union-attr]
