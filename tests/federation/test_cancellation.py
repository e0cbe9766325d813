"""A caller's cancellation reaches the downstream server, on both endpoints, in both eras.

Behind one gateway: the fault server over stdio, over HTTP (it speaks 2026-07-28, so the gateway's
session does too; its handshake-era clients on `/servers/{name}/mcp` go through the twin), and over
HTTP again with `protocol: legacy` (the gateway speaks the handshake era to it). Its `hang` tool
never answers and counts the calls it was told to abandon (`cancelled`): that count is what the
server observed. The official SDK client abandons a call the way its era says: a handshake-era
client sends `notifications/cancelled`, a 2026-07-28 client closes the request's HTTP stream. The
gateway records the call as `cancelled` (the call log line, the calls metric).
"""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable, Iterator

import anyio
import httpx2
import pytest
from mcp import Client

from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import stop_process
from tests.support.mcp_servers import fault_http, fault_stdio

pytestmark = pytest.mark.e2e

SERVERS = ("stdio", "http", "legacy")


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    tmp = tmp_path_factory.mktemp("cancellation")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        http, http_url = fault_http(tmp / "fault-http.log")
        processes.append(http)
        legacy, legacy_url = fault_http(tmp / "fault-legacy.log")
        processes.append(legacy)
        servers = [
            fault_stdio("stdio", call_timeout_s=60),
            {"name": "http", "transport": "http", "url": http_url, "call_timeout_s": 60},
            {
                "name": "legacy",
                "transport": "http",
                "url": legacy_url,
                "protocol": "legacy",
                "call_timeout_s": 60,
            },
        ]
        with run_gateway(tmp / "gateway", servers) as gateway:
            yield gateway
    finally:
        for process in processes:
            stop_process(process)


async def cancelled_on(federation: Federation, server: str) -> int:
    """How many calls the server says it was told to abandon."""
    async with Client(federation.server(server)) as client:
        result = await client.call_tool("cancelled", {})
    assert result.structured_content is not None
    return int(result.structured_content["cancelled"])


def cancelled_calls(federation: Federation, tool: str) -> float:
    """The gateway's count of calls of `tool` that ended cancelled (its calls metric)."""
    text = httpx2.get(f"{federation.base}/metrics", timeout=10).text
    total = 0.0
    for line in text.splitlines():
        if (
            line.startswith("colonnade_calls_total{")
            and f'tool="{tool}"' in line
            and 'status="cancelled"' in line
        ):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def abandon(url: str, tool: str, mode: str) -> None:
    """Call `tool`, give up after a second, and check the connection still serves."""
    async with Client(url, mode=mode) as client:
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool(tool, {})
        assert scope.cancelled_caught, "the hanging call answered"
        await client.list_tools()


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(100):  # ten seconds
        if await check():
            return
        await anyio.sleep(0.1)
    raise AssertionError(what)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("endpoint", ["aggregate", "own"])
async def test_a_cancelled_call_is_cancelled_on_the_server(
    federation: Federation, endpoint: str, server: str, mode: str
) -> None:
    before = await cancelled_on(federation, server)
    tool = f"default:{server}:hang"
    recorded = cancelled_calls(federation, tool)
    if endpoint == "aggregate":
        await abandon(federation.mcp, f"default__{server}__hang", mode)
    else:
        await abandon(federation.server(server), "hang", mode)

    async def seen() -> bool:
        return await cancelled_on(federation, server) == before + 1

    await until(seen, "the server was not told the call is cancelled")
    assert cancelled_calls(federation, tool) == recorded + 1
