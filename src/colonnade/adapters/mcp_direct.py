"""A plain `tools/call` to a 2026-07-28 Streamable HTTP server, POSTed straight over the session's pool.

Through the `mcp` SDK's client, one proxied call is a pydantic request model dumped to JSON, a
dispatcher, two task hops over memory streams, an `httpx2` request carried by aiohttp, and the
answer validated back: 1.85 ms of the gateway's CPU per call on the shared machine, against 0.51 ms
this way and 0.34 ms for aiohttp alone (`bench/mcp_hop.py`). A 2026-07-28 request
is stateless (everything it needs is in its own `_meta` and headers), so a call that needs none of
what the session adds can be sent as it would be on the wire: that is a call whose caller asked for
no progress and no log messages and is not answering an input round. Everything else (and the
input rounds a caller is asked about) goes through the SDK's session.

The request is the one the SDK would send: its headers (the client's own, `MCP-Protocol-Version`,
`Mcp-Method`, `Mcp-Name`, the tool's `Mcp-Param-*`) and `_meta` (the caller's keys, the protocol
version, the gateway's client info, the relayed caller's capabilities); without a progress token,
since nobody listens for progress. The answer is read as the SDK reads it, with the same errors:
a JSON-RPC error is the server's; a body that is not a JSON-RPC answer is a parse error; a status
of 400 and above, a 202 and an unexpected media type mean what the SDK makes of them; a failed
connection is `CONNECTION_CLOSED` (and, as when the SDK's transport fails, the session is
restarted), a deadline `REQUEST_TIMEOUT`. Abandoning the call closes its POST, which at 2026-07-28
is its cancellation. A result is passed on as the server sent it (a JSON object), not validated
field by field: the gateway only relays it. A redirect is not followed here: the server did not
take the request, so it goes through the SDK (which follows same-origin ones). A server that
answers with an SSE stream gets the SDK path from then on (it may close a stream early and expect
a resumption); that first stream is read here to its answer, or fails the call if it ends first.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import encode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colonnade.adapters.mcp_relay import Relay

__all__ = ["DirectCalls", "NotTaken"]

_ACCEPT = "application/json, text/event-stream"


class NotTaken(Exception):
    """The server did not take the request (it redirected it): send it through the SDK instead."""


class DirectCalls:
    """Direct `tools/call` POSTs to one server, on the aiohttp pool of its session's HTTP client."""

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
        """False once the server answered with an SSE stream: its calls go through the SDK."""
        self._ids = itertools.count(1)

    def takes(self, relay: Relay, protocol_version: str | None) -> bool:
        """Whether a call for this caller needs nothing the SDK's session adds."""
        return (
            self.enabled
            and protocol_version in MODERN_PROTOCOL_VERSIONS
            and relay.log_level is None
            and not relay.wants_progress
            and relay.input_responses is None
            and relay.request_state is None
        )

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        relay: Relay,
        protocol_version: str,
        param_headers: Mapping[str, str],
        timeout_s: float,
    ) -> dict[str, Any]:
        """The server's result; raises `MCPError` as the SDK would, or `NotTaken`.

        `param_headers` are the `Mcp-Param-*` headers the session derives from the tool's listing.
        """
        meta = {
            **relay.meta,
            types.PROTOCOL_VERSION_META_KEY: protocol_version,
            types.CLIENT_INFO_META_KEY: self.client_info,
            types.CLIENT_CAPABILITIES_META_KEY: relay.client_capabilities,
        }
        request_id = next(self._ids)
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"_meta": meta, "name": name, "arguments": arguments},
        }
        headers = {
            **self.headers,
            "accept": _ACCEPT,
            "content-type": "application/json",
            "mcp-protocol-version": protocol_version,
            "mcp-method": "tools/call",
            "mcp-name": encode_header_value(name),
            **param_headers,
        }
        body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
        try:
            async with asyncio.timeout(timeout_s):
                return await self._post(body, headers, request_id)
        except TimeoutError:
            raise MCPError(types.REQUEST_TIMEOUT, "Request 'tools/call' timed out") from None
        except aiohttp.ClientError as exc:
            self.on_connection_lost()
            reason = str(exc) or type(exc).__name__
            raise MCPError(
                types.CONNECTION_CLOSED, f"the connection to the server failed: {reason}"
            ) from None

    async def _post(self, body: bytes, headers: dict[str, str], request_id: int) -> dict[str, Any]:
        response = await self.pool().post(
            self.url,
            data=body,
            headers=headers,
            allow_redirects=False,
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
        )
        try:
            return await self._answer(response, request_id)
        finally:
            response.close()  # unread (abandoned): the connection goes, which cancels the request

    async def _answer(self, response: aiohttp.ClientResponse, request_id: int) -> dict[str, Any]:
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
            async for data in _events(response.content):
                try:
                    message = json.loads(data)
                except ValueError:
                    continue  # the SDK skips what it cannot read on a stream, too
                if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                    return _result_of(data, request_id)
            raise MCPError(types.CONNECTION_CLOSED, "SSE stream ended without a response")
        raise MCPError(types.INVALID_REQUEST, f"Unexpected content type: {kind}")


def _result_of(body: bytes | str, request_id: int) -> dict[str, Any]:
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


async def _events(content: aiohttp.StreamReader) -> AsyncIterator[str]:
    """The `data` of each event of an SSE stream."""
    data: list[str] = []
    async for raw in content:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)
