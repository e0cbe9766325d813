"""The plain 2026-07-28 `tools/call` at `/mcp`, served without the SDK transport's per-request machinery.

A stateless JSON `tools/call` is most of `/mcp`'s traffic, and the SDK's single-exchange entry
spends on each one what this gateway has already done or does not need: it reads the body again
through a second size limit and parses it again (the edge read, checked and parsed it), and dumps
the reply through a model again after its runner dumped the result.

This module decides, before anything runs, whether a request is the plain case, with the SDK's
own checks: POST, a modern protocol-version header and no session header, the edge's checked body
within the SDK's size bound, JSON Content-Type, an Accept that takes JSON, one JSON-RPC request
object for `tools/call` without a progress token, no duplicated routing header, the SDK's inbound
classification ladder and its `Mcp-Param-*` check (skipped, as its outcome is known, for a schema
that mirrors no argument in a header). Anything else, including every request one of those
checks would refuse, goes to the SDK untouched, which refuses it in its own words. A plain call is
then run by the SDK's own `ServerRunner` (its middleware, params validation, the surface's
`tools/call` handler, the result's validation and serialisation, as for every other request) and
written as the SDK writes a single-exchange reply. It mirrors `handle_modern_request` in
`mcp/server/_streamable_http_modern.py` of mcp 2.3.0 in JSON-response mode;
`tests/surfaces/mcp/test_mcp_plain_call.py` compares the two answer by answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner, aclose_shielded, modern_error_data
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    find_invalid_x_mcp_header,
    validate_mcp_param_headers,
    x_mcp_header_map,
)
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import CORE_RESULT_TYPES, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from colonnade.surfaces.edge import request_body, request_document

__all__ = ["OneExchange", "PlainCall", "PlainRequest", "plain_call", "request_message", "serve_plain_call"]

_METHOD = "tools/call"
_PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.lower()
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


@dataclass(frozen=True, slots=True)
class PlainRequest:
    """One JSON-RPC `tools/call` request, as a plain path serves it."""

    request: Request
    request_id: RequestId
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PlainCall(PlainRequest):
    """A request that passed every check the SDK makes before it runs a 2026-07-28 `tools/call`."""

    route: InboundModernRoute


def plain_call(scope: Scope, receive: Receive, server: Server[Any], max_body_bytes: int) -> PlainCall | None:
    """The request as a plain call, or None: the SDK then serves it (and refuses it, if it must)."""
    if scope.get("method") != "POST":
        return None
    body = request_body(scope)
    if body is None or len(body) > max_body_bytes:
        return None
    pairs = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in scope["headers"]]
    first: dict[str, str] = {}  # as Starlette's `Headers` reads one: the first of repeated lines
    for name, value in pairs:
        first.setdefault(name, value)
    if (
        first.get(MCP_PROTOCOL_VERSION_HEADER) not in MODERN_PROTOCOL_VERSIONS
        or MCP_SESSION_ID_HEADER in first
    ):
        return None
    if not _within(first.get("content-length"), max_body_bytes):
        return None
    content_type = first.get("content-type")
    if content_type is None or not content_type.lower().startswith("application/json"):
        return None
    request = Request(scope, receive)
    if not check_accept_headers(request)[0]:
        return None
    message = request_message(request_document(scope))
    if message is None:
        return None
    decoded, request_id, params = message
    if find_duplicated_routing_header(pairs) is not None:
        return None
    route = classify_inbound_request(decoded, headers=first)
    if not isinstance(route, InboundModernRoute) or not _params_headers_agree(server, request, first, params):
        return None
    return PlainCall(request, request_id, params, route)


def _within(declared: str | None, limit: int) -> bool:
    """The SDK's own size check reads a declared Content-Length first (a bad number it ignores)."""
    if declared is None:
        return True
    try:
        return int(declared) <= limit
    except ValueError:
        return True


def request_message(
    decoded: Any, *, envelope: bool = True
) -> tuple[dict[str, Any], RequestId, dict[str, Any]] | None:
    """The body, id and params of a body (as the edge parsed it) that is exactly one JSON-RPC
    `tools/call` request, as the SDK reads it (its own model), with no progress token (whose
    notifications this path cannot send). With `envelope` (2026-07-28) the params must carry a
    `_meta`; a handshake-era request may have none."""
    if not isinstance(decoded, dict) or "id" not in decoded or not decoded.keys() <= _ENVELOPE_KEYS:
        return None
    try:
        message = JSONRPCRequest.model_validate(decoded)
    except ValidationError:
        return None
    params = message.params
    if message.method != _METHOD or params is None:
        return None
    meta = params.get("_meta") if envelope or "_meta" in params else {}
    if not isinstance(meta, dict) or "progressToken" in meta:
        return None
    return decoded, message.id, params


def _params_headers_agree(
    server: Server[Any], request: Request, headers: Mapping[str, str], params: dict[str, Any]
) -> bool:
    """The SDK's `Mcp-Param-*` check passes, with the schema from the server's own lookup; a request
    this path cannot judge the same way (no lookup, an odd name or arguments, a failing lookup) is
    not plain."""
    lookup = server.get_tool_input_schema
    name = params.get("name")
    arguments = params.get("arguments")
    if lookup is None or not isinstance(name, str) or not isinstance(arguments, Mapping | None):
        return False
    if not arguments and not any(header.startswith(_PARAM_PREFIX) for header in headers):
        return True
    try:
        schema = lookup(name)
    except Exception:
        return False
    if schema is None or not _MIRRORED.mirrors(schema):
        return True
    return validate_mcp_param_headers(schema, arguments or {}, request.headers) is None


class _MirroredArguments:
    """Whether a tool's input schema mirrors any argument in an `Mcp-Param-*` header, per schema.

    The SDK's check walks the schema twice per call; one without a valid `x-mcp-header` annotation
    (nearly all of them) passes every request, whatever its headers. Schemas are the catalog's own
    long-lived objects, so the answer is kept by identity (with the schema, so the identity holds),
    in a table that starts afresh when it grows past `limit` (republished tools bring new objects).
    """

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._known: dict[int, tuple[Any, bool]] = {}

    def mirrors(self, schema: Any) -> bool:
        known = self._known.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        answer = find_invalid_x_mcp_header(schema) is None and bool(x_mcp_header_map(schema))
        if len(self._known) >= self.limit:
            self._known.clear()
        self._known[id(schema)] = (schema, answer)
        return answer


_MIRRORED = _MirroredArguments()


@dataclass(slots=True)
class OneExchange:
    """A request's dispatch context when its answer is one JSON body: nothing can travel back before
    it (a request to the client is refused, a notification dropped, as the SDK does then)."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: MessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        """A JSON reply has no room for a notification: dropped, as the SDK drops it."""

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """No progress token, so no progress to report."""


async def serve_plain_call(
    server: Server[Any], lifespan_state: Any, call: PlainCall, scope: Scope, receive: Receive, send: Send
) -> None:
    """Run the call through the SDK's runner and answer with its one JSON-RPC reply."""
    route = call.route
    connection = Connection.from_envelope(
        route.protocol_version, route.client_info, route.client_capabilities
    )
    exchange = OneExchange(
        transport=TransportContext(
            kind="streamable-http", can_send_request=False, headers=call.request.headers
        ),
        request_id=call.request_id,
        message_metadata=ServerMessageMetadata(request_context=call.request),
    )
    reply: JSONRPCResponse | JSONRPCError
    try:
        try:
            result = await ServerRunner(server, connection, lifespan_state).on_request(
                exchange, _METHOD, call.params
            )
        finally:
            await aclose_shielded(connection)  # what a handler or middleware pushed on the connection
    except Exception as exc:
        reply = JSONRPCError(jsonrpc="2.0", id=call.request_id, error=modern_error_data(exc))
    else:
        reply = JSONRPCResponse(jsonrpc="2.0", id=call.request_id, result=result)
    await _write(reply, scope, receive, send)


async def _write(reply: JSONRPCResponse | JSONRPCError, scope: Scope, receive: Receive, send: Send) -> None:
    """As the SDK writes a single-exchange reply: the JSON-RPC error code picks the HTTP status."""
    error = reply.error if isinstance(reply, JSONRPCError) else None
    status = ERROR_CODE_HTTP_STATUS.get(error.code, 200) if isinstance(error, ErrorData) else 200
    content = _plain_json(reply) if isinstance(reply, JSONRPCResponse) else None
    if content is None:
        body = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
        content = json.dumps(body, separators=(",", ":")).encode()
    headers = [(b"content-length", str(len(content)).encode()), (b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


def _plain_json(reply: JSONRPCResponse) -> bytes | None:
    """The reply's bytes without a model dump, for a result the SDK's per-version model already
    dumped in JSON mode (a core result type): plain JSON values, which the dump would copy as they
    are. Anything else (None) is dumped through the model, as the SDK does."""
    if reply.result.get("resultType") not in CORE_RESULT_TYPES:
        return None
    envelope = {"jsonrpc": reply.jsonrpc, "id": reply.id, "result": reply.result}
    try:
        return json.dumps(envelope, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError):
        return None
