"""The client side's one fenced SDK seam: a plain 2026-07-28 `tools/call` POSTed straight over the
session's pool, mirroring what the SDK's `ClientSession.call_tool` and its Streamable HTTP client
transport send and how they read the answer (`docs/sdk-seams.md`; its one private member is
`ClientSession._resolve_param_headers`, behind `param_headers`).

Through the `mcp` SDK's client, one proxied call is a pydantic request model dumped to JSON, a
dispatcher, two task hops over memory streams, an `httpx2` request carried by aiohttp, and the
answer validated back: 1.85 ms of the gateway's CPU per call on the shared machine, against 0.51 ms
this way and 0.34 ms for aiohttp alone (`bench/mcp_hop.py`). A call that needs none of what the
session adds is sent as it would be on the wire instead; everything else (and the input rounds a
caller is asked about) goes through the SDK's session.

2026-07-28 (the newest known version only, where the SDK trims no later revision's fields from a
result): a request is stateless (everything it needs is in its own `_meta` and headers), so a
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

A handshake-era call always goes through the SDK's session: sending it directly inside the
session meant mirroring the session's stream handling (messages on the call's stream, resumption,
cancellation) and reaching into its dispatcher, for about 0.2 ms a call (`docs/sdk-seams.md`).

The answer is read as the SDK reads it, with the same errors: a JSON-RPC error is the
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
from typing import Any

import aiohttp
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import encode_header_value
from mcp_types import methods as _methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colonnade.adapters.mcp.http_transport import cannot_connect
from colonnade.adapters.mcp.sse import events
from colonnade.mcp_relay.relay import Relay
from colonnade.observability.tracing import with_trace

__all__ = ["NEWEST", "DirectCalls", "NotTaken", "param_headers"]

_ACCEPT = "application/json, text/event-stream"
NEWEST = KNOWN_PROTOCOL_VERSIONS[-1]
"""The one version a call is sent directly at: no later revision's fields to trim from its result
(the SDK's session trims them for older versions)."""
_METHOD = "tools/call"


def param_headers(session: ClientSession, name: str, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The `Mcp-Param-*` headers the SDK's session sends with this call (derived from the tool's
    listing, which only the session keeps): the one private member of the SDK reached here."""
    return session._resolve_param_headers(name, arguments)


class NotTaken(Exception):
    """The server did not take the request (it redirected it): send it through the SDK instead."""


class DirectCalls:
    """Direct 2026-07-28 `tools/call` POSTs to one server, on the aiohttp pool of its HTTP client."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        pool: Callable[[], aiohttp.ClientSession],
        *,
        client_info: dict[str, Any],
        on_connection_lost: Callable[[], None],
    ) -> None:
        self.url = url
        self.headers = {key: value for key, value in headers.items() if key.lower() != "accept-encoding"}
        self.pool = pool
        self.client_info = client_info
        self.on_connection_lost = on_connection_lost
        self.enabled = True
        """False once a 2026-07-28 server answered with an SSE stream: its calls go through the SDK."""
        self._ids = itertools.count(1)

    def takes(self, relay: Relay, protocol_version: str | None) -> bool:
        """Whether a call for this caller needs nothing the SDK's session adds: a 2026-07-28 call
        without progress, log messages or an input round's answers."""
        if relay.wants_progress or relay.input_responses is not None or relay.request_state is not None:
            return False
        return (
            protocol_version == NEWEST
            and protocol_version in MODERN_PROTOCOL_VERSIONS
            and self.enabled
            and relay.log_level is None
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

    async def _answer(self, response: aiohttp.ClientResponse, request_id: int | str) -> dict[str, Any]:
        status = response.status
        kind = response.headers.get("content-type", "").lower()
        if status == 202:
            raise MCPError(types.INVALID_REQUEST, "server answered a request with 202 Accepted")
        if 300 <= status < 400 and "location" in response.headers:
            raise NotTaken(f"the server redirected the request ({status})")
        if status >= 400:
            if kind.startswith("application/json"):
                error = _error_of(await response.read())
                if error is not None:
                    raise MCPError.from_error_data(error)
            if status == 404:
                raise MCPError(types.METHOD_NOT_FOUND, "Not Found")
            raise MCPError(types.INTERNAL_ERROR, "Server returned an error response")
        if kind.startswith("application/json"):
            return _result_of(await response.read(), request_id)
        if kind.startswith("text/event-stream"):
            self.enabled = False
            return await _stream_answer(response, request_id)
        raise MCPError(types.INVALID_REQUEST, f"Unexpected content type: {kind}")


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


def _checked(result: dict[str, Any], version: str) -> dict[str, Any]:
    """The result as the SDK's session passes it on at the newest version: validated (pydantic's
    `ValidationError` if it is not a result of `tools/call`), a negative `ttlMs` floored."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
        result["ttlMs"] = 0
    _methods.validate_server_result(_METHOD, version, result)
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
