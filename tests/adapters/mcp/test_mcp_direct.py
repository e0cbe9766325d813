"""The direct `tools/call` POST to a 2026-07-28 server: the request the SDK would send, and its answers
read with the SDK's errors, against a scripted raw HTTP server on loopback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from colonnade.adapters.mcp.direct_post import DirectCalls, NotTaken
from colonnade.mcp_relay.relay import Relay
from tests.adapters.raw_server import Exchange, RawServer, reply

VERSION = "2026-07-28"
INFO = {"name": "colonnade", "version": "test"}


def http(status: str, body: bytes, content_type: str = "application/json", extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


def answer(result: Any, request_id: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


class Direct:
    """DirectCalls on a fresh aiohttp pool; `lost` counts the connections it reported lost."""

    def __init__(self, url: str) -> None:
        self.session = aiohttp.ClientSession()
        self.lost = 0
        self.calls = DirectCalls(
            f"{url}/mcp",
            {"x-api-key": "k", "accept-encoding": "gzip"},
            lambda: self.session,
            client_info=INFO,
            on_connection_lost=self._lose,
        )

    def _lose(self) -> None:
        self.lost += 1

    async def call(self, relay: Relay | None = None, timeout_s: float = 5.0) -> dict[str, Any]:
        return await self.calls.call_tool(
            "echo", {"text": "hi"}, relay or Relay(), VERSION, {"mcp-param-region": "eu"}, None, timeout_s
        )


async def direct(url: str) -> AsyncIterator[Direct]:
    made = Direct(url)
    try:
        yield made
    finally:
        await made.session.close()


async def scripted(raw: bytes, scenario: Callable[[Direct, RawServer], Any]) -> Any:
    async with RawServer(reply(raw)) as server:
        async for made in direct(server.url):
            return await scenario(made, server)


def wire(exchange: Exchange) -> tuple[dict[str, str], dict[str, Any]]:
    lines = exchange.head.decode().split("\r\n")[1:]
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
    return headers, json.loads(exchange.body)


async def test_the_request_is_the_one_the_sdk_would_send_without_a_progress_token() -> None:
    relay = Relay(client_capabilities={"elicitation": {}}, meta={"trace": "t-1"})

    async def scenario(made: Direct, server: RawServer) -> None:
        result = await made.call(relay)
        assert result == {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}],
            "isError": False,
        }
        headers, body = wire(server.exchanges[0])
        assert headers["mcp-protocol-version"] == VERSION
        assert headers["mcp-method"] == "tools/call"
        assert headers["mcp-name"] == "echo"
        assert headers["mcp-param-region"] == "eu"
        assert headers["x-api-key"] == "k"
        assert headers["accept"] == "application/json, text/event-stream"
        assert "accept-encoding" not in headers
        assert body["method"] == "tools/call"
        assert body["params"]["name"] == "echo"
        assert body["params"]["arguments"] == {"text": "hi"}
        assert body["params"]["_meta"] == {
            "trace": "t-1",
            types.PROTOCOL_VERSION_META_KEY: VERSION,
            types.CLIENT_INFO_META_KEY: INFO,
            types.CLIENT_CAPABILITIES_META_KEY: {"elicitation": {}},
        }
        await made.call(relay)
        assert len(server.exchanges) == 2
        assert server.connections == 1  # an answered call leaves its connection in the pool

    async def echo(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        result = {"resultType": "complete", "content": [{"type": "text", "text": "hi"}], "isError": False}
        writer.write(http("200 OK", answer(result, json.loads(exchange.body)["id"])))
        await writer.drain()
        return True

    async with RawServer(echo) as server:
        async for made in direct(server.url):
            await scenario(made, server)


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (
            http("200 OK", b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad name"}}'),
            -32602,
            "bad name",
        ),
        (http("200 OK", b"<html>not json</html>"), types.PARSE_ERROR, "Failed to parse JSON response"),
        (http("200 OK", answer(["not", "an", "object"])), types.PARSE_ERROR, "not a JSON-RPC answer"),
        (http("200 OK", answer({}, request_id=7)), types.PARSE_ERROR, "not a JSON-RPC answer"),
        (
            http("400 Bad Request", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}'),
            -32600,
            "no",
        ),
        (http("404 Not Found", b"nope", "text/plain"), types.METHOD_NOT_FOUND, "Not Found"),
        (http("503 Unavailable", b"busy", "text/plain"), types.INTERNAL_ERROR, "Server returned an error"),
        (http("202 Accepted", b""), types.INVALID_REQUEST, "202 Accepted"),
        (
            http("200 OK", b"hello", "text/plain"),
            types.INVALID_REQUEST,
            "Unexpected content type: text/plain",
        ),
    ],
    ids=["rpc-error", "garbage", "not-object", "other-id", "400-rpc", "404", "503", "202", "media-type"],
)
async def test_answers_that_are_not_results_fail_as_the_sdk_fails_them(
    raw: bytes, code: int, message: str
) -> None:
    async def scenario(made: Direct, server: RawServer) -> None:
        with pytest.raises(MCPError) as caught:
            await made.call()
        assert caught.value.error.code == code
        assert message in caught.value.error.message
        assert made.lost == 0

    await scripted(raw, scenario)


async def test_a_redirect_is_not_taken_so_the_sdk_sends_it() -> None:
    async def scenario(made: Direct, server: RawServer) -> None:
        with pytest.raises(NotTaken):
            await made.call()

    await scripted(http("307 Temporary Redirect", b"", "text/plain", "Location: /mcp/\r\n"), scenario)


async def test_a_result_that_is_not_one_of_the_version_fails_as_on_the_sdks_path() -> None:
    async def scenario(made: Direct, server: RawServer) -> None:
        with pytest.raises(ValidationError):
            await made.call()

    no_result_type = answer({"content": [{"type": "text", "text": "hi"}]})  # required at 2026-07-28
    await scripted(http("200 OK", no_result_type), scenario)


async def test_an_sse_answer_is_read_to_its_response_and_the_server_then_gets_the_sdk_path() -> None:
    notice = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    stream = (
        b"id: e1\nretry: 100\ndata: \n\n"
        + b"data: "
        + json.dumps(notice).encode()
        + b"\n\n"
        + b"id: e2\ndata: "
        + answer({"resultType": "complete", "content": [], "structuredContent": {"n": 1}})
        + b"\n\n"
    )

    async def scenario(made: Direct, server: RawServer) -> None:
        assert made.calls.takes(Relay(), VERSION)
        assert await made.call() == {"resultType": "complete", "content": [], "structuredContent": {"n": 1}}
        assert not made.calls.takes(Relay(), VERSION)

    await scripted(http("200 OK", stream, "text/event-stream"), scenario)


async def test_an_sse_stream_that_ends_without_the_answer_fails_the_call() -> None:
    async def scenario(made: Direct, server: RawServer) -> None:
        with pytest.raises(MCPError) as caught:
            await made.call()
        assert caught.value.error.code == types.CONNECTION_CLOSED

    await scripted(http("200 OK", b"id: e1\ndata: \n\n", "text/event-stream"), scenario)


async def test_a_deadline_closes_the_post_which_cancels_the_request() -> None:
    async def never(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(30)
        return False

    async with RawServer(never) as server:
        async for made in direct(server.url):
            with pytest.raises(MCPError) as caught:
                await made.call(timeout_s=0.2)
            assert caught.value.error.code == types.REQUEST_TIMEOUT
            assert made.session.connector is not None
            await asyncio.sleep(0.05)
            assert all(not c for c in made.session.connector._conns.values())  # nothing kept to reuse


async def test_a_refused_connection_is_a_lost_connection() -> None:
    async with RawServer(reply(b"")) as server:
        url = server.url
    async for made in direct(url):
        with pytest.raises(MCPError) as caught:
            await made.call()
        assert caught.value.error.code == types.CONNECTION_CLOSED
        assert made.lost == 1


@pytest.mark.parametrize(
    ("relay", "version", "taken"),
    [
        (Relay(), VERSION, True),
        (Relay(), "2025-11-25", False),
        (Relay(log_level="info"), VERSION, False),
        (Relay(wants_progress=True), VERSION, False),
        (Relay(input_responses={"a": {"action": "cancel"}}), VERSION, False),  # type: ignore[dict-item]
        (Relay(request_state="s"), VERSION, False),
    ],
    ids=["plain", "handshake-era", "logs", "progress", "input-round", "request-state"],
)
def test_only_a_call_that_needs_nothing_of_the_session_is_taken(
    relay: Relay, version: str, taken: bool
) -> None:
    calls = DirectCalls(
        "http://127.0.0.1:1/mcp", {}, aiohttp.ClientSession, client_info=INFO, on_connection_lost=print
    )
    assert calls.takes(relay, version) is taken


# -- helpers ---------------------------------------------------------------------------------------


def sse(*events: bytes) -> bytes:
    body = b"".join(events)
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\n"
    )


def event(message: dict[str, Any] | None, event_id: str | None = None, retry: int | None = None) -> bytes:
    lines = [f"id: {event_id}"] if event_id else []
    if retry is not None:
        lines.append(f"retry: {retry}")
    lines.append(f"data: {json.dumps(message) if message is not None else ''}")
    return ("\n".join(lines) + "\n\n").encode()
