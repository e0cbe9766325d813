"""A server's own endpoint answers a handshake-era request with one JSON body when nothing else can come.

Behind one gateway: the fault server over HTTP (declares no logging) and the conformance reference
server over HTTP (declares logging). A request of a session whose client declared none of sampling,
elicitation or roots, naming no progress token, to a server that will not log, gets one JSON body;
every other request keeps its SSE stream (progress, log messages and questions travel on it).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client

from tests.federation.conftest import Federation, run_gateway
from tests.support.loopback import stop_process
from tests.support.mcp_servers import ROOT, fault_http, python_http

pytestmark = pytest.mark.e2e

ERA = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def federation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Federation]:
    tmp = tmp_path_factory.mktemp("endpoint-streams")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        fault, fault_url = fault_http(tmp / "fault.log")
        processes.append(fault)
        reference, reference_url = python_http(
            ROOT / "tests" / "conformance" / "reference_server.py", tmp / "reference.log"
        )
        processes.append(reference)
        servers = [
            {"name": "fault", "transport": "http", "url": fault_url},
            {"name": "reference", "transport": "http", "url": reference_url},
        ]
        with run_gateway(tmp / "gateway", servers) as gateway:
            yield gateway
    finally:
        for process in processes:
            stop_process(process)


class Session:
    """A handshake-era session opened with raw HTTP, so each answer's media type can be seen."""

    def __init__(self, client: httpx2.Client, url: str, capabilities: dict[str, Any]) -> None:
        self.client, self.url, self.next_id = client, url, 1
        params = {
            "protocolVersion": ERA,
            "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "1"},
        }
        response = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, None)
        self.id = response.headers["mcp-session-id"]
        assert _message(response)["result"]["protocolVersion"] == ERA
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.id)

    def request(self, method: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The answer's media type, and the JSON-RPC response in it."""
        self.next_id += 1
        response = self._post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, self.id
        )
        return response.headers["content-type"].split(";")[0], _message(response)

    def _post(self, message: dict[str, Any], session: str | None) -> httpx2.Response:
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-protocol-version": ERA}
        if session is not None:
            headers["mcp-session-id"] = session
        response = self.client.post(self.url, json=message, headers=headers)
        assert response.status_code in (200, 202), response.text
        return response


def _message(response: httpx2.Response) -> dict[str, Any]:
    """The response to the request: the body, or the last `data:` of the SSE stream."""
    if response.headers["content-type"].startswith("application/json"):
        return dict(response.json())
    datas = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return dict(json.loads([data for data in datas if data][-1]))


def _call(name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return params


def test_a_quiet_request_gets_one_json_body(federation: Federation) -> None:
    with httpx2.Client(timeout=30) as client:
        session = Session(client, federation.server("fault"), {})
        session.request("tools/list", {})  # the server's handshake-era session is up from here on
        kind, answer = session.request("tools/call", _call("echo"))
        assert kind == "application/json"
        assert answer["result"]["content"] == [{"type": "text", "text": "echo done"}]
        kind, answer = session.request("tools/list", {})
        assert kind == "application/json"
        assert "echo" in {tool["name"] for tool in answer["result"]["tools"]}


def test_a_request_that_asks_for_progress_keeps_its_stream(federation: Federation) -> None:
    with httpx2.Client(timeout=30) as client:
        session = Session(client, federation.server("fault"), {})
        session.request("tools/list", {})
        kind, answer = session.request("tools/call", _call("echo", {"progressToken": "p-1"}))
        assert kind == "text/event-stream"
        assert answer["result"]["content"] == [{"type": "text", "text": "echo done"}]


@pytest.mark.parametrize("capability", ["elicitation", "sampling", "roots"])
def test_a_client_that_can_be_asked_keeps_its_stream(federation: Federation, capability: str) -> None:
    with httpx2.Client(timeout=30) as client:
        session = Session(client, federation.server("fault"), {capability: {}})
        session.request("tools/list", {})
        kind, answer = session.request("tools/call", _call("echo"))
        assert kind == "text/event-stream"
        assert answer["result"]["content"] == [{"type": "text", "text": "echo done"}]


def test_a_server_that_logs_keeps_the_stream_and_its_log_messages_arrive(federation: Federation) -> None:
    with httpx2.Client(timeout=30) as client:
        session = Session(client, federation.server("reference"), {})
        session.request("tools/list", {})
        kind, answer = session.request("tools/call", _call("test_tool_with_logging"))
        assert kind == "text/event-stream"
        assert answer["result"]["content"][0]["text"] == "Tool with logging executed successfully"


async def test_the_official_client_calls_through_json_bodies(federation: Federation) -> None:
    async with Client(federation.server("fault"), mode="legacy") as client:
        for _ in range(3):
            result = await client.call_tool("echo", {})
            assert not result.is_error
            assert result.content[0].text == "echo done"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_progress_still_reaches_a_caller_who_asks_for_it(federation: Federation, mode: str) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    async with Client(federation.server("reference"), mode=mode) as client:
        for _ in range(2):  # the first call, and one on a server whose direct path is known
            seen.clear()
            result = await client.call_tool("test_tool_with_progress", {}, progress_callback=progress)
            assert not result.is_error
            assert seen == [0, 50, 100]


MODERN = "2026-07-28"


def _modern(client: httpx2.Client, url: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A 2026-07-28 `tools/call` as raw HTTP: the answer's media type and the JSON-RPC response."""
    response = _modern_raw(client, url, params)
    return response.headers["content-type"].split(";")[0], _message(response)


def _modern_raw(client: httpx2.Client, url: str, params: dict[str, Any]) -> httpx2.Response:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
        **params.pop("_meta", {}),
    }
    headers = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": params["name"],
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    response = client.post(url, json=message, headers=headers)
    assert response.status_code == 200, response.text
    return response


def test_a_modern_request_is_answered_as_on_the_aggregate_endpoint(federation: Federation) -> None:
    """One JSON body for a 2026-07-28 call that names neither a progress token nor a log level (the
    SDK's SSE before); a stream when it does and the server reports progress or logs."""
    with httpx2.Client(timeout=30) as client:
        kind, answer = _modern(client, federation.server("fault"), _call("echo"))
        assert (kind, answer["result"]["content"][0]["text"]) == ("application/json", "echo done")
        reference = federation.server("reference")
        response = _modern_raw(client, reference, _call("test_tool_with_progress", {"progressToken": "p-1"}))
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.text.count('"notifications/progress"') == 3
        level = {"io.modelcontextprotocol/logLevel": "info"}
        response = _modern_raw(client, reference, _call("test_logging_tool", level))
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.text.count('"notifications/message"') == 2
