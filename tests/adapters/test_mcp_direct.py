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

from colonnade.adapters.mcp_direct import DirectCalls, NotTaken
from colonnade.adapters.mcp_relay import Relay
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


# -- the handshake era: a direct call inside the SDK's session ------------------------------------

HANDSHAKE = "2025-11-25"
SESSION = {"mcp-session-id": "s-1", "mcp-protocol-version": HANDSHAKE}


class Session:
    """What the SDK's session would get: the messages handed to it, the cancellations sent through it."""

    def __init__(self) -> None:
        self.delivered: list[types.JSONRPCMessage] = []
        self.cancelled: list[tuple[str, str]] = []

    async def deliver(self, message: types.JSONRPCMessage) -> None:
        self.delivered.append(message)

    async def cancel(self, request_id: str, reason: str) -> None:
        self.cancelled.append((request_id, reason))


class InSession(Direct):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.side = Session()
        self.calls.session_headers = lambda: SESSION
        self.calls.session = self.side
        self.gone = 0
        self.calls.on_session_gone = self._gone

    def _gone(self) -> None:
        self.gone += 1

    async def call(self, relay: Relay | None = None, timeout_s: float = 5.0) -> dict[str, Any]:
        return await self.calls.call_tool(
            "echo", {"text": "hi"}, relay or Relay(), HANDSHAKE, {}, None, timeout_s
        )


async def in_session(answer: Any, scenario: Callable[[InSession, RawServer], Any]) -> Any:
    async with RawServer(answer) as server:
        made = InSession(server.url)
        try:
            return await scenario(made, server)
        finally:
            await made.session.close()


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


def result_for(exchange: Exchange, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": json.loads(exchange.body)["id"], "result": result}


async def test_a_session_call_carries_the_session_and_an_id_of_its_own_and_no_progress_token() -> None:
    async def scenario(made: InSession, server: RawServer) -> None:
        relay = Relay(meta={"trace": "t-1"})
        assert await made.call(relay) == {"content": [{"type": "text", "text": "hi"}]}
        await made.call()
        (headers, body), (_, second) = wire(server.exchanges[0]), wire(server.exchanges[1])
        assert headers["mcp-session-id"] == "s-1"
        assert headers["mcp-protocol-version"] == HANDSHAKE
        assert "mcp-method" not in headers and "mcp-name" not in headers
        assert body == {
            "jsonrpc": "2.0",
            "id": "colonnade-direct-1",
            "method": "tools/call",
            "params": {"_meta": {"trace": "t-1"}, "name": "echo", "arguments": {"text": "hi"}},
        }
        assert second["id"] == "colonnade-direct-2" and "_meta" not in second["params"]

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        result = {"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}
        writer.write(http("200 OK", json.dumps(result_for(exchange, result)).encode()))
        return True

    await in_session(answer, scenario)


async def test_what_else_the_server_sends_on_the_stream_goes_to_the_session() -> None:
    asked = {"jsonrpc": "2.0", "id": 7, "method": "roots/list"}
    logged = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(
            sse(
                event(None, "e0"),
                event(asked, "e1"),
                event(logged),
                event(result_for(exchange, {"content": []}), "e2"),
            )
        )
        return True

    async def scenario(made: InSession, server: RawServer) -> None:
        assert await made.call() == {"content": []}
        assert [type(m).__name__ for m in made.side.delivered] == ["JSONRPCRequest", "JSONRPCNotification"]
        assert made.calls.takes(Relay(), HANDSHAKE)  # SSE answers stay on this path in a session

    await in_session(answer, scenario)


async def test_a_stream_closed_before_the_answer_is_resumed_from_its_last_event() -> None:
    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.head.startswith(b"POST"):
            writer.write(sse(event(None, "e1", retry=50)))  # priming, then the server closes the stream
            return True
        body = {"jsonrpc": "2.0", "id": "colonnade-direct-1", "result": {"content": [], "isError": False}}
        writer.write(sse(event(body, "e2")))
        return True

    async def scenario(made: InSession, server: RawServer) -> None:
        closed: list[bool] = []

        class Follower(Relay):
            @property
            def follows_stream_closes(self) -> bool:
                return True

            async def stream_closed(self) -> None:
                closed.append(True)

        assert await made.call(Follower()) == {"content": [], "isError": False}
        resumed, _ = wire(server.exchanges[1]) if server.exchanges[1].body else (None, None)
        head = server.exchanges[1].head.decode().lower()
        assert head.startswith("get ") and "last-event-id: e1" in head and "mcp-session-id: s-1" in head
        assert resumed is None and closed == [True]

    await in_session(answer, scenario)


async def test_a_session_the_server_no_longer_knows_is_terminated_as_the_sdk_says() -> None:
    async def scenario(made: InSession, server: RawServer) -> None:
        with pytest.raises(MCPError) as caught:
            await made.call()
        assert caught.value.error.code == types.INVALID_REQUEST
        assert caught.value.error.message == "Session terminated"
        assert made.gone == 1 and made.lost == 0  # a new session is opened; the connection is fine

    await in_session(reply(http("404 Not Found", b"", "text/plain")), scenario)


async def test_a_result_is_checked_and_trimmed_for_the_negotiated_version_as_the_sdk_does() -> None:
    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        body = exchange.body
        result = {"content": [], "resultType": "complete"} if b"echo" in body else {"content": "not a list"}
        writer.write(http("200 OK", json.dumps(result_for(exchange, result)).encode()))
        return True

    async def scenario(made: InSession, server: RawServer) -> None:
        assert await made.call() == {"content": []}  # a later revision's field is dropped
        with pytest.raises(ValidationError):
            await made.calls.call_tool("other", {}, Relay(), HANDSHAKE, {}, None, 5.0)

    await in_session(answer, scenario)


async def test_an_abandoned_session_call_is_cancelled_through_the_session() -> None:
    async def never(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(30)
        return False

    async def scenario(made: InSession, server: RawServer) -> None:
        with pytest.raises(MCPError) as caught:
            await made.call(timeout_s=0.2)
        assert caught.value.error.code == types.REQUEST_TIMEOUT
        call = asyncio.ensure_future(made.call())
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert made.side.cancelled == [
            ("colonnade-direct-1", "timed out after 0.2s"),
            ("colonnade-direct-2", "caller cancelled"),
        ]

    await in_session(never, scenario)


class Askable(Relay):
    @property
    def can_ask(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("relay", "logging", "session", "taken"),
    [
        (Relay(), False, True, True),
        (Relay(), False, False, False),
        (Relay(log_level="debug"), False, True, True),
        (Relay(log_level="debug"), True, True, False),
        (Relay(), True, True, True),
        (Relay(wants_progress=True), False, True, False),
        (Askable(), False, True, False),
    ],
    ids=["quiet", "no-session-yet", "logs-none-declared", "logs", "no-level", "progress", "can-be-asked"],
)
def test_a_session_call_is_taken_only_when_nothing_else_can_travel_with_it(
    relay: Relay, logging: bool, session: bool, taken: bool
) -> None:
    calls = DirectCalls(
        "http://127.0.0.1:1/mcp", {}, aiohttp.ClientSession, client_info=INFO, on_connection_lost=print
    )
    calls.session = Session()
    calls.session_headers = lambda: SESSION if session else {}
    capabilities = types.ServerCapabilities(logging={} if logging else None)
    assert calls.takes(relay, HANDSHAKE, capabilities) is taken
