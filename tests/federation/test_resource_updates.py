"""A 2026-07-28 client's resource subscriptions on `/servers/{name}/mcp` reach the server and back.

A 2026-07-28 client names the resources it watches on its `subscriptions/listen` stream. Behind one
gateway: `server-everything` over stdio (a handshake-era server: the gateway subscribes with
`resources/subscribe`; its `toggle-subscriber-updates` tool sends an update of every subscribed
resource at once, then every 5 s), and the fault server over HTTP and over stdio (it speaks
2026-07-28: the gateway opens a `subscriptions/listen` of its own; its `touch` tool publishes an
update of one resource). The official SDK client listens through the gateway and hears the updates
of what it watches only; a handshake-era client of the stdio server (which has no handshake-era
twin) subscribes with `resources/subscribe` and is notified.
"""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable, Iterator

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.subscriptions import Subscription
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent

from colonnade.surfaces.mcp.proxy.aggregate import SERVER_META_KEY
from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import stop_process
from tests.support.mcp_servers import EVERYTHING, fault_http, fault_stdio, node_stdio

# These tests drive the handshake era's own features on purpose (logging/setLevel, resources/subscribe),
# which the SDK flags as deprecated since 2026-07-28.
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    tmp = tmp_path_factory.mktemp("resource-updates")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        fault, url = fault_http(tmp / "fault.log")
        processes.append(fault)
        servers = [
            node_stdio("everything", EVERYTHING, "stdio"),
            fault_stdio("local"),
            {"name": "fault", "transport": "http", "url": url},
        ]
        with run_gateway(tmp / "gateway", servers) as gateway:
            yield gateway
    finally:
        for process in processes:
            stop_process(process)


async def first_event(subscription: Subscription, poke: Callable[[], Awaitable[None]]) -> ServerEvent:
    """The first event on the stream, poking the server until one comes (the gateway's own
    subscription to the server may still be on its way when the caller's is acknowledged)."""
    heard: list[ServerEvent] = []
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:

            async def take() -> None:
                async for event in subscription:
                    heard.append(event)
                    group.cancel_scope.cancel()

            group.start_soon(take)
            for _ in range(40):
                await poke()
                await anyio.sleep(0.5)
    assert heard, "no update reached the caller"
    return heard[0]


async def test_a_2026_server_tells_the_caller_of_the_resources_it_watches(federation: Federation) -> None:
    watched = "test://watched"
    async with Client(federation.server("fault")) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=[watched]) as subscription:

            async def poke() -> None:
                await client.call_tool("touch", {"name": "test://not-watched"})
                await client.call_tool("touch", {"name": watched})

            event = await first_event(subscription, poke)
    assert event == ResourceUpdated(uri=watched)


async def test_a_handshake_era_server_is_subscribed_for_a_2026_caller(federation: Federation) -> None:
    watched = "demo://resource/dynamic/text/1"
    async with Client(federation.server("everything")) as client:
        assert client.protocol_version == "2026-07-28"
        toggled = 0
        try:
            async with client.listen(resource_subscriptions=[watched]) as subscription:

                async def poke() -> None:
                    nonlocal toggled
                    if not toggled:  # at once, then every 5 s
                        await client.call_tool("toggle-subscriber-updates", {})
                        toggled += 1

                event = await first_event(subscription, poke)
        finally:
            if toggled:
                await client.call_tool("toggle-subscriber-updates", {})
    assert event == ResourceUpdated(uri=watched)


async def test_a_handshake_era_caller_of_a_2026_stdio_server_is_notified(federation: Federation) -> None:
    watched = "test://watched"
    updated: list[str] = []

    async def notified(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async with Client(federation.server("local"), mode="legacy", message_handler=notified) as client:
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe
        await client.subscribe_resource(watched)
        for _ in range(40):
            await client.call_tool("touch", {"name": "test://not-watched"})
            await client.call_tool("touch", {"name": watched})
            await anyio.sleep(0.5)
            if updated:
                break
        assert updated and set(updated) == {watched}
        await client.unsubscribe_resource(watched)
        updated.clear()
        await client.call_tool("touch", {"name": watched})
        await anyio.sleep(1.0)
    assert updated == []  # unsubscribed: no more notifications


async def test_a_handshake_era_session_that_ends_without_unsubscribing_leaves_no_listen_open(
    federation: Federation,
) -> None:
    """Each of its subscriptions held a `subscriptions/listen` of the gateway's on the server; the
    session's end lets go of them (before, they stayed open for the gateway's lifetime)."""

    async def listening() -> int:
        async with Client(federation.server("local")) as probe:
            result = await probe.call_tool("listening", {})
        return int((result.structured_content or {})["listening"])

    async def settles(expected: int) -> int:
        seen = -1
        for _ in range(100):  # the session's end reaches the server within moments
            if (seen := await listening()) == expected:
                break
            await anyio.sleep(0.2)
        return seen

    before = await listening()
    async with Client(federation.server("local"), mode="legacy") as client:
        await client.subscribe_resource("test://left-open-1")
        await client.subscribe_resource("test://left-open-2")
        assert await settles(before + 2) == before + 2
    assert await settles(before) == before  # the client ended its session without unsubscribing


async def _tool_named(client: Client, suffix: str) -> str:
    """The wire name of a downstream tool on `/mcp` (namespaced by tenant and server)."""
    names = [tool.name for tool in (await client.list_tools()).tools]
    return next(name for name in names if name.endswith(suffix))


async def _serving(client: Client, uri: str) -> str:
    """The server `/mcp` names for a listed resource (two fault servers list the same URI)."""
    listed = (await client.list_resources()).resources
    resource = next(item for item in listed if str(item.uri) == uri)
    return str((resource.meta or {})[SERVER_META_KEY])


async def test_a_2026_caller_of_the_aggregated_endpoint_hears_a_downstream_resource(
    federation: Federation,
) -> None:
    watched = "test://watched"  # listed by `local` and by `fault`: one of them serves it on /mcp
    async with Client(federation.mcp) as client:
        assert client.protocol_version == "2026-07-28"
        touch = await _tool_named(client, f"{await _serving(client, watched)}__touch")
        async with client.listen(resource_subscriptions=[watched]) as subscription:

            async def poke() -> None:
                await client.call_tool(touch, {"name": "test://not-watched"})
                await client.call_tool(touch, {"name": watched})

            event = await first_event(subscription, poke)
    assert event == ResourceUpdated(uri=watched)


async def _listening(federation: Federation, server: str) -> int:
    async with Client(federation.server(server)) as probe:
        result = await probe.call_tool("listening", {})
    return int((result.structured_content or {})["listening"])


async def _settles(federation: Federation, server: str, expected: int) -> int:
    seen = -1
    for _ in range(100):  # a watch's end reaches the server within moments
        if (seen := await _listening(federation, server)) == expected:
            break
        await anyio.sleep(0.2)
    return seen


async def test_a_handshake_era_caller_of_the_aggregated_endpoint_subscribes_to_a_downstream_resource(
    federation: Federation,
) -> None:
    watched = "test://watched"
    updated: list[str] = []

    async def notified(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async with Client(federation.mcp, mode="legacy", message_handler=notified) as client:
        server = await _serving(client, watched)
        touch = await _tool_named(client, f"{server}__touch")
        before = await _listening(federation, server)
        await client.subscribe_resource(watched)
        assert await _settles(federation, server, before + 1) == before + 1  # the server is told once
        for _ in range(40):
            await client.call_tool(touch, {"name": "test://not-watched"})
            await client.call_tool(touch, {"name": watched})
            await anyio.sleep(0.5)
            if updated:
                break
        assert updated and set(updated) == {watched}
        await client.unsubscribe_resource(watched)
        assert await _settles(federation, server, before) == before
        updated.clear()
        await client.call_tool(touch, {"name": watched})
        await anyio.sleep(1.0)
        assert updated == []  # unsubscribed: no more notifications
        await client.subscribe_resource(watched)
        assert await _settles(federation, server, before + 1) == before + 1
    assert await _settles(federation, server, before) == before  # the session ended without unsubscribing


async def test_an_unknown_downstream_resource_cannot_be_subscribed_on_the_aggregated_endpoint(
    federation: Federation,
) -> None:
    async with Client(federation.mcp, mode="legacy") as client:
        with pytest.raises(MCPError, match="no resource test://nobody-lists-this"):
            await client.subscribe_resource("test://nobody-lists-this")
