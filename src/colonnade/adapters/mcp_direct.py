"""A plain `tools/call` to a Streamable HTTP server, POSTed straight over the session's pool.

Through the `mcp` SDK's client, one proxied call is a pydantic request model dumped to JSON, a
dispatcher, two task hops over memory streams, an `httpx2` request carried by aiohttp, and the
answer validated back: 1.85 ms of the gateway's CPU per call on the shared machine, against 0.51 ms
this way and 0.34 ms for aiohttp alone (`bench/mcp_hop.py`). A call that needs none of what the
session adds is sent as it would be on the wire instead; everything else (and the input rounds a
caller is asked about) goes through the SDK's session.

2026-07-28: a request is stateless (everything it needs is in its own `_meta` and headers), so a
call whose caller asked for no progress and no log messages and is not answering an input round
is sent directly: the request the SDK would send, its headers (the client's own,
`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, the tool's `Mcp-Param-*`) and `_meta` (the
caller's keys, the protocol version, the gateway's client info, the relayed caller's
capabilities); without a progress token, since nobody listens for progress. Abandoning the call
closes its POST, which at 2026-07-28 is its cancellation. A server that answers with an SSE stream
gets the SDK path from then on (it may close a stream early and expect a resumption); that first
stream is read here to its answer, or fails the call if it ends first. The result is checked as
the SDK's session checks it (`_checked`), so a direct call and the SDK's path refuse the same
answers (pydantic's `ValidationError`); about 15 us of CPU per call.

Handshake era (a session, `Mcp-Session-Id`): a call is sent directly inside the session
(`SessionSide`, the SDK's own session: its id and protocol version header as the SDK sends them)
when the caller asked for no progress, cannot be asked anything during the call, and hears no log
messages (it set none, or the server declared no logging). Its id is a string of the gateway's own
(`colonnade-direct-N`), never one the SDK's session numbers. Whatever the server sends on the call's
stream besides the answer (a request, a notification) is handed to the session as its transport
would hand it; a stream that ends before the answer is resumed from its last event id after the
server's retry interval, as the SDK resumes one (and a caller that follows stream closes hears of
it). Abandoning the call sends `notifications/cancelled` through the session, as the SDK does. The
result is checked and trimmed as the SDK checks it for the negotiated version; a 404 means the
server ended the session (`Session terminated`, as the SDK says, unless the server's body says
otherwise), and the session is opened again for the next calls, as the spec asks of a client.

Both eras read the answer as the SDK reads it, with the same errors: a JSON-RPC error is the
server's; a body that is not a JSON-RPC answer is a parse error; a status of 400 and above, a 202
and an unexpected media type mean what the SDK makes of them; a failed connection is
`CONNECTION_CLOSED` (and, as when the SDK's transport fails, the session is restarted), a deadline
`REQUEST_TIMEOUT`. A redirect is not followed here: the server did not take the request, so it goes
through the SDK (which follows same-origin ones).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import mcp_types as types
from mcp.client.session import _later_revision_fields  # the SDK's own trim of a result (mcp 2.3.0)
from mcp.client.streamable_http import DEFAULT_RECONNECTION_DELAY_MS, MAX_RECONNECTION_ATTEMPTS
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import encode_header_value
from mcp_types import methods as _methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colonnade.adapters.mcp_http_transport import cannot_connect
from colonnade.adapters.mcp_relay import Relay
from colonnade.adapters.mcp_sse import Event, events
from colonnade.observability.tracing import with_trace

__all__ = ["DirectCalls", "NotTaken", "SessionSide"]

_ACCEPT = "application/json, text/event-stream"
_METHOD = "tools/call"


class NotTaken(Exception):
    """The server did not take the request (it redirected it): send it through the SDK instead."""


class SessionSide(Protocol):
    """The SDK session a handshake-era direct call runs in (the gateway's `RelayDispatcher`)."""

    async def deliver(self, message: types.JSONRPCMessage) -> None:
        """Handle a message the server sent on the call's stream, as if the SDK's transport read it."""

    async def cancel(self, request_id: str, reason: str) -> None:
        """Tell the server, through the session, that the request is abandoned."""


class DirectCalls:
    """Direct `tools/call` POSTs to one server, on the aiohttp pool of its session's HTTP client.

    `session_headers()` are the `Mcp-Session-Id` and `MCP-Protocol-Version` headers the SDK's
    transport sends on the session (empty at 2026-07-28); `session` is attached once the SDK's
    session runs.
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        pool: Callable[[], aiohttp.ClientSession],
        *,
        client_info: dict[str, Any],
        on_connection_lost: Callable[[], None],
        session_headers: Callable[[], Mapping[str, str]] = dict,
        on_session_gone: Callable[[], None] = lambda: None,
    ) -> None:
        self.url = url
        self.headers = {key: value for key, value in headers.items() if key.lower() != "accept-encoding"}
        self.pool = pool
        self.client_info = client_info
        self.on_connection_lost = on_connection_lost
        self.session_headers = session_headers
        self.on_session_gone = on_session_gone
        self.session: SessionSide | None = None
        self.enabled = True
        """False once a 2026-07-28 server answered with an SSE stream: its calls go through the SDK."""
        self._ids = itertools.count(1)

    def takes(
        self,
        relay: Relay,
        protocol_version: str | None,
        capabilities: types.ServerCapabilities | None = None,
    ) -> bool:
        """Whether a call for this caller needs nothing the SDK's session adds (`capabilities`: the
        server's, from its handshake)."""
        if relay.wants_progress or relay.input_responses is not None or relay.request_state is not None:
            return False
        if protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self.enabled and relay.log_level is None
        return (
            protocol_version is not None
            and self.session is not None
            and "mcp-session-id" in self.session_headers()
            and not relay.can_ask
            and (relay.log_level is None or (capabilities is not None and capabilities.logging is None))
        )

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        relay: Relay,
        protocol_version: str,
        param_headers: Mapping[str, str],
        trace: Mapping[str, str] | None,
        timeout_s: float,
    ) -> dict[str, Any]:
        """The server's result; raises `MCPError` as the SDK would, or `NotTaken`.

        `param_headers` are the `Mcp-Param-*` headers the session derives from the tool's listing;
        `trace` (W3C trace context) goes into the request's `_meta`, over the caller's own keys.
        """
        if protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await self._in_session(name, arguments, relay, protocol_version, trace, timeout_s)
        meta = {
            **with_trace(relay.meta, trace),
            types.PROTOCOL_VERSION_META_KEY: protocol_version,
            types.CLIENT_INFO_META_KEY: self.client_info,
            types.CLIENT_CAPABILITIES_META_KEY: relay.client_capabilities,
        }
        request_id = next(self._ids)
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": _METHOD,
            "params": {"_meta": meta, "name": name, "arguments": arguments},
        }
        headers = {
            **self.headers,
            "accept": _ACCEPT,
            "content-type": "application/json",
            "mcp-protocol-version": protocol_version,
            "mcp-method": _METHOD,
            "mcp-name": encode_header_value(name),
            **param_headers,
        }

        async def read(response: aiohttp.ClientResponse) -> dict[str, Any]:
            return _checked(await self._answer(response, request_id), protocol_version)

        try:
            async with asyncio.timeout(timeout_s):
                return await self._post(message, headers, read)
        except TimeoutError:
            raise _timed_out() from None

    async def _in_session(
        self,
        name: str,
        arguments: dict[str, Any],
        relay: Relay,
        protocol_version: str,
        trace: Mapping[str, str] | None,
        timeout_s: float,
    ) -> dict[str, Any]:
        session = self.session
        assert session is not None
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if relay.meta or trace:
            params = {"_meta": dict(with_trace(relay.meta, trace)), **params}
        request_id = f"colonnade-direct-{next(self._ids)}"
        message = {"jsonrpc": "2.0", "id": request_id, "method": _METHOD, "params": params}
        headers = {
            **self.headers,
            "accept": _ACCEPT,
            "content-type": "application/json",
            **self.session_headers(),
        }

        async def read(response: aiohttp.ClientResponse) -> dict[str, Any]:
            answer = await self._answer(response, request_id, relay=relay, session=session)
            return _checked(answer, protocol_version)

        try:
            async with asyncio.timeout(timeout_s):
                return await self._post(message, headers, read)
        except TimeoutError:
            await session.cancel(request_id, f"timed out after {timeout_s}s")
            raise _timed_out() from None
        except asyncio.CancelledError:
            await session.cancel(request_id, "caller cancelled")
            raise

    async def _post(
        self,
        message: dict[str, Any],
        headers: dict[str, str],
        read: Callable[[aiohttp.ClientResponse], Any],
    ) -> dict[str, Any]:
        body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
        try:
            response = await self.pool().post(
                self.url,
                data=body,
                headers=headers,
                allow_redirects=False,
                skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
            )
            try:
                answer: dict[str, Any] = await read(response)
                return answer
            finally:
                response.close()  # unread (abandoned): the connection goes, which cancels a 2026 request
        except aiohttp.ClientError as exc:
            self.on_connection_lost()
            if isinstance(exc, aiohttp.ClientConnectorError):
                reason = cannot_connect(self.url, exc)
            else:
                reason = str(exc) or type(exc).__name__
            raise MCPError(
                types.CONNECTION_CLOSED, f"the connection to the server failed: {reason}"
            ) from None

    async def _answer(
        self,
        response: aiohttp.ClientResponse,
        request_id: int | str,
        *,
        relay: Relay | None = None,
        session: SessionSide | None = None,
    ) -> dict[str, Any]:
        status = response.status
        kind = response.headers.get("content-type", "").lower()
        if status == 202:
            raise MCPError(types.INVALID_REQUEST, "server answered a request with 202 Accepted")
        if 300 <= status < 400 and "location" in response.headers:
            raise NotTaken(f"the server redirected the request ({status})")
        if status >= 400:
            if status == 404 and session is not None:
                self.on_session_gone()  # the spec's MUST: a new session (the SDK's transport says so too)
            if kind.startswith("application/json"):
                error = _error_of(await response.read())
                if error is not None:
                    raise MCPError.from_error_data(error)
            if status == 404:
                if session is not None:  # the SDK's words for a session the server no longer knows
                    raise MCPError(types.INVALID_REQUEST, "Session terminated")
                raise MCPError(types.METHOD_NOT_FOUND, "Not Found")
            raise MCPError(types.INTERNAL_ERROR, "Server returned an error response")
        if kind.startswith("application/json"):
            return _result_of(await response.read(), request_id)
        if kind.startswith("text/event-stream"):
            if session is None:
                self.enabled = False
                return await _stream_answer(response, request_id)
            assert relay is not None
            return await self._session_stream(response, relay, session)
        raise MCPError(types.INVALID_REQUEST, f"Unexpected content type: {kind}")

    async def _session_stream(
        self, response: aiohttp.ClientResponse, relay: Relay, session: SessionSide
    ) -> dict[str, Any]:
        """The answer on a handshake-era call's stream, resumed as the SDK resumes one that ends first."""
        seen = _Seen()
        failures = 0
        stream: aiohttp.ClientResponse | None = response
        while True:
            if stream is not None:
                answer = await _read_stream(stream, session, seen, resumed=stream is not response)
                if answer is not None:
                    return answer
                failures = 0
            if seen.last_id is None:
                raise MCPError(types.CONNECTION_CLOSED, "SSE stream ended without a response")
            if failures >= MAX_RECONNECTION_ATTEMPTS:
                message = "SSE stream ended and reconnection attempts were exhausted"
                raise MCPError(types.CONNECTION_CLOSED, message)
            retry_ms = seen.retry_ms if seen.retry_ms is not None else DEFAULT_RECONNECTION_DELAY_MS
            await asyncio.sleep(retry_ms / 1000)
            if relay.follows_stream_closes:
                await relay.stream_closed()
            stream = await self._resume(seen.last_id)
            if stream is None:
                failures += 1

    async def _resume(self, last_id: str) -> aiohttp.ClientResponse | None:
        """The rest of a stream (`GET` with `Last-Event-ID`), or None when the server did not give it."""
        headers = {**self.headers, "accept": _ACCEPT, **self.session_headers(), "last-event-id": last_id}
        try:
            stream = await self.pool().get(
                self.url, headers=headers, allow_redirects=False, skip_auto_headers=("User-Agent",)
            )
        except aiohttp.ClientError:
            return None
        if stream.status >= 300:
            stream.close()
            return None
        return stream


@dataclass(slots=True)
class _Seen:
    """Where a stream got to: its last event id and the server's retry interval."""

    last_id: str | None = None
    retry_ms: int | None = None


async def _read_stream(
    stream: aiohttp.ClientResponse, session: SessionSide, seen: _Seen, *, resumed: bool
) -> dict[str, Any] | None:
    """The answer on one stream, or None when the stream ended (or broke) before it."""
    try:
        async for event in events(stream.content):
            seen.last_id = event.id or seen.last_id
            seen.retry_ms = event.retry if event.retry is not None else seen.retry_ms
            answer = await _answer_in(event, session)
            if answer is not None:
                return answer
    except aiohttp.ClientError:
        pass  # a broken stream is resumed like an ended one, as the SDK does
    finally:
        if resumed:
            stream.close()
    return None


def _timed_out() -> MCPError:
    return MCPError(types.REQUEST_TIMEOUT, f"Request {_METHOD!r} timed out")


async def _stream_answer(response: aiohttp.ClientResponse, request_id: int | str) -> dict[str, Any]:
    """The answer on a 2026-07-28 call's stream; what else it carries is skipped, as nobody asked for it."""
    async for event in events(response.content):
        try:
            message = json.loads(event.data) if event.data else None
        except ValueError:
            continue  # the SDK skips what it cannot read on a stream, too
        if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
            return _result_of(event.data, request_id)
    raise MCPError(types.CONNECTION_CLOSED, "SSE stream ended without a response")


async def _answer_in(event: Event, session: SessionSide) -> dict[str, Any] | None:
    """The result if the event carries the call's answer (its error raised); anything else the
    server sent goes to the session. As in the SDK, the first answer on the stream is the call's."""
    if not event.data:
        return None  # a priming event: only its id counts
    try:
        message = types.jsonrpc_message_adapter.validate_json(event.data, by_name=False)
    except ValidationError as exc:
        raise MCPError(types.PARSE_ERROR, f"Failed to parse SSE message: {exc}") from None
    if isinstance(message, types.JSONRPCError):
        raise MCPError.from_error_data(message.error)
    if isinstance(message, types.JSONRPCResponse):
        return dict(message.result)
    await session.deliver(message)
    return None


def _checked(result: dict[str, Any], version: str) -> dict[str, Any]:
    """The result as the SDK's session passes it on for the negotiated version: validated (pydantic's
    `ValidationError` if it is not a result of `tools/call`), a negative `ttlMs` floored, later
    revisions' fields dropped."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
        result["ttlMs"] = 0
    _methods.validate_server_result(_METHOD, version, result)
    later = _later_revision_fields(_METHOD, version)
    if not later.isdisjoint(result):
        return {key: value for key, value in result.items() if key not in later}
    return result


def _result_of(body: bytes | str, request_id: int | str) -> dict[str, Any]:
    """The result of a JSON-RPC answer to our request; its error as `MCPError`; else a parse error."""
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise MCPError(types.PARSE_ERROR, f"Failed to parse JSON response: {exc}") from None
    if isinstance(message, dict) and message.get("jsonrpc") == "2.0" and message.get("id") == request_id:
        result = message.get("result")
        if isinstance(result, dict) and "error" not in message:
            return result
        error = _error_of(message)
        if error is not None and "result" not in message:
            raise MCPError.from_error_data(error)
    raise MCPError(types.PARSE_ERROR, "Failed to parse JSON response: not a JSON-RPC answer to the request")


def _error_of(message: bytes | dict[str, Any]) -> types.ErrorData | None:
    if isinstance(message, bytes):
        try:
            message = json.loads(message)
        except ValueError:
            return None
    error = message.get("error") if isinstance(message, dict) else None
    try:
        return types.ErrorData.model_validate(error, by_name=False) if isinstance(error, dict) else None
    except ValidationError:
        return None
