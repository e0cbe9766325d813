"""The aggregate `/mcp` streams the answer of a request that asked for progress or log messages.

`/mcp` answers with one JSON body by default (the fast path), which carries only the answer. Behind
one gateway, the conformance reference server over HTTP (its tools report progress and log, and it
declares logging): a request that names a progress token, a 2026-07-28 request with a `_meta` log
level, and a tool call of a handshake-era session that set a level with `logging/setLevel` are
answered over SSE, so what the server sends during the call reaches the caller; plain requests keep
their JSON body. The official SDK client in both eras, over HTTP and over stdio, and raw HTTP to
see each answer's media type.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
import yaml
from mcp import Client, StdioServerParameters

from tests.federation.conftest import COLONNADE, Federation, run_gateway
from tests.support.mcp_servers import reference_http

# These tests drive the handshake era's own features on purpose (logging/setLevel, resources/subscribe),
# which the SDK flags as deprecated since 2026-07-28.
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

TOOL = "default__reference__"
LINES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
ACCEPT = "application/json, text/event-stream"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    with reference_http(tmp_path_factory.mktemp("aggregate-streams") / "reference.log") as url:
        yield [{"name": "reference", "transport": "http", "url": url}]


@pytest.fixture(scope="module")
def federation(
    servers: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Federation]:
    with run_gateway(tmp_path_factory.mktemp("aggregate-streams-gateway"), servers) as gateway:
        yield gateway


class Lines:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.seen.append(str(params.data))


# -- the official client ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_reaches_a_caller_that_declared_nothing(federation: Federation, mode: str) -> None:
    """No elicitation declared: a handshake-era session of JSON bodies, or a 2026-07-28 caller."""
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with Client(federation.mcp, mode=mode) as client:  # type: ignore[arg-type]
        for _ in range(2):
            seen.clear()
            result = await client.call_tool(f"{TOOL}test_tool_with_progress", {}, progress_callback=progress)
            assert result.is_error is False
            assert seen == [0, 50, 100]
        plain = await client.call_tool(f"{TOOL}test_simple_text", {})
    assert plain.is_error is False


async def test_a_handshake_era_caller_hears_the_servers_logs_at_its_level(federation: Federation) -> None:
    lines = Lines()
    async with Client(federation.mcp, mode="legacy", logging_callback=lines) as client:
        assert client.server_capabilities.logging is not None
        await client.call_tool(f"{TOOL}test_tool_with_logging", {})
        assert lines.seen == []  # no level set: no opt-in
        await client.set_logging_level("info")
        result = await client.call_tool(f"{TOOL}test_tool_with_logging", {})
        assert result.is_error is False
        assert lines.seen == LINES
        lines.seen.clear()
        await client.set_logging_level("warning")
        await client.call_tool(f"{TOOL}test_tool_with_logging", {})
        assert lines.seen == []  # the server logs at info


async def test_a_2026_caller_that_set_a_log_level_hears_the_servers_logs(federation: Federation) -> None:
    lines = Lines()
    async with Client(federation.mcp, log_level="info", logging_callback=lines) as client:
        assert client.protocol_version == MODERN
        result = await client.call_tool(f"{TOOL}test_tool_with_logging", {})
    assert result.is_error is False
    assert lines.seen == LINES


async def test_a_handshake_era_stdio_caller_sets_a_level(
    servers: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("aggregate-streams-stdio")
    config = {"data_dir": str(folder / "data"), "servers": servers}
    (folder / "colonnade.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    params = StdioServerParameters(
        command=str(COLONNADE), args=["serve", "--stdio"], cwd=str(folder), env=env
    )
    lines = Lines()
    async with Client(params, mode="legacy", logging_callback=lines) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        for _ in range(300):
            if f"{TOOL}test_tool_with_logging" in tools:
                break
            tools = {tool.name for tool in (await client.list_tools()).tools}
        await client.set_logging_level("debug")
        result = await client.call_tool(f"{TOOL}test_tool_with_logging", {})
    assert result.is_error is False
    assert lines.seen == LINES


# -- what each answer is: raw HTTP -----------------------------------------------------------------


def _answer(response: httpx2.Response) -> tuple[str, dict[str, Any]]:
    """The media type, and the JSON-RPC response (the body, or the last `data:` of the stream)."""
    assert response.status_code == 200, response.text
    media = response.headers["content-type"].split(";")[0]
    if media == "application/json":
        return media, dict(response.json())
    datas = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return media, dict(json.loads([data for data in datas if data][-1]))


def _modern(
    client: httpx2.Client, url: str, method: str, params: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    meta = dict(params.pop("_meta", {}))
    meta[types.PROTOCOL_VERSION_META_KEY] = MODERN
    meta[types.CLIENT_INFO_META_KEY] = {"name": "t", "version": "1"}
    meta[types.CLIENT_CAPABILITIES_META_KEY] = {}
    headers = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if "name" in params:
        headers["mcp-name"] = params["name"]
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    return _answer(client.post(url, json=message, headers=headers))


class Session:
    """A handshake-era session whose client declares nothing, opened with raw HTTP."""

    def __init__(self, client: httpx2.Client, url: str) -> None:
        self.client, self.url, self.next_id = client, url, 1
        params = {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        response = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, None)
        self.id = response.headers["mcp-session-id"]
        assert _answer(response)[0] == "application/json"
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.id)

    def request(self, method: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.next_id += 1
        return _answer(
            self._post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, self.id)
        )

    def _post(self, message: dict[str, Any], session: str | None) -> httpx2.Response:
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-protocol-version": HANDSHAKE}
        if session is not None:
            headers["mcp-session-id"] = session
        return self.client.post(self.url, json=message, headers=headers)


def _methods(datas: str) -> list[str]:
    return [json.loads(line[5:]).get("method", "") for line in datas.splitlines() if line.startswith("data:")]


def test_a_2026_request_streams_only_when_it_asks_for_it(federation: Federation) -> None:
    with httpx2.Client(timeout=30) as client:
        plain = _modern(client, federation.mcp, "tools/call", {"name": f"{TOOL}test_tool_with_progress"})
        progress = _modern(
            client,
            federation.mcp,
            "tools/call",
            {"name": f"{TOOL}test_tool_with_progress", "_meta": {"progressToken": "p1"}},
        )
        listed = _modern(client, federation.mcp, "tools/list", {"_meta": {"progressToken": "p2"}})
    assert plain[0] == "application/json" and plain[1]["result"]["isError"] is False
    assert progress[0] == "text/event-stream" and progress[1]["result"]["isError"] is False
    # nothing to stream before the answer: the SDK still answers with one JSON body
    assert listed[0] == "application/json" and listed[1]["result"]["tools"]


def test_a_handshake_era_session_streams_only_what_asks_for_it(federation: Federation) -> None:
    with httpx2.Client(timeout=30) as client:
        session = Session(client, federation.mcp)
        call = {"name": f"{TOOL}test_tool_with_logging", "arguments": {}}
        assert session.request("tools/call", call)[0] == "application/json"
        progress = session.request(
            "tools/call",
            {"name": f"{TOOL}test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}},
        )
        assert progress[0] == "text/event-stream" and progress[1]["result"]["isError"] is False
        assert session.request("logging/setLevel", {"level": "info"})[0] == "application/json"
        logged = session.client.post(
            session.url,
            json={"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": call},
            headers={
                "accept": ACCEPT,
                "content-type": "application/json",
                "mcp-protocol-version": HANDSHAKE,
                "mcp-session-id": session.id,
            },
        )
        assert logged.headers["content-type"].startswith("text/event-stream")
        assert _methods(logged.text).count("notifications/message") == 3
        assert session.request("tools/list", {})[0] == "application/json"
