"""The plain handshake-era `tools/call` in a live session of `/mcp`, served without the SDK
session's per-request machinery.

The SDK answers a request of a handshake-era (2025-11-25 and older) session with one JSON body by
handing it over: the HTTP request's task reads and parses the body again, opens a memory stream
for the answer and sends the message to the session's read loop, which spawns a task for it;
the handler's answer goes through the session's write stream to its message router, which puts
it on the request's stream, where the HTTP task takes it and writes it. Four tasks and three
memory streams per call, about as much CPU as the gateway spends on the call itself.

Here a session's transport serves a plain call in the request's own task instead: decided before
anything runs, with the SDK's own checks (the security check, an Accept that takes JSON, the JSON
Content-Type, one JSON-RPC `tools/call` request of this session, no progress token), in a session
answered with one JSON body (`request_streams.py`) whose connection the SDK has initialized, that
set no log level and whose client declared nothing it could be asked about (elicitation, sampling,
roots). It runs through the SDK's `ServerRunner` with the session's own connection (negotiated
version, client capabilities and info, the handler's per-connection state), and is written as the
SDK writes that answer. Everything around it stays the SDK's and the manager's: the session
lookup, the principal binding, the ledger's in-flight count and the idle timer (the transport's
`handle_request` wraps this). The call is registered with the session's dispatcher, so a
`notifications/cancelled` for it cancels it as it would the SDK's (answered with the SDK's
`REQUEST_CANCELLED`), and a session that ends meanwhile cancels it and answers 500, as the SDK's
transport does. Anything else goes to the SDK untouched. `tests/surfaces/test_mcp_session_plain_call.py`
compares the two answer by answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Set
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, cast

import anyio
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, REQUEST_CANCELLED, check_accept_headers
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher, _InFlight, handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError, JSONRPCResponse
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from colonnade.surfaces.edge import request_document
from colonnade.surfaces.mcp.announcer import connection_of
from colonnade.surfaces.mcp.plain_call import OneExchange, PlainRequest, request_message
from colonnade.surfaces.mcp.request_streams import PerRequestTransport

__all__ = ["PlainSessionTransport", "SessionCalls"]

logger = logging.getLogger(__name__)
_METHOD = "tools/call"


@dataclass(frozen=True, slots=True)
class SessionCalls:
    """What the sessions of one session manager need to serve plain calls."""

    server: Server[Any]
    lifespan_state: Callable[[], Any]
    logging: Set[str]
    """The sessions that set a log level: their tool calls may send log messages, so none is plain."""
    transports: Callable[[str], object]
    """The transport of a live session, by id (the manager's table)."""

    async def learn_connection(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Server middleware: a session's transport learns its connection from the first request the
        SDK serves in it (the SDK keeps it inside the session's loop)."""
        if ctx.session is not None:
            connection = connection_of(ctx.session)
            if isinstance(connection, Connection) and connection.session_id is not None:
                transport = self.transports(connection.session_id)
                if isinstance(transport, PlainSessionTransport) and transport.connection is None:
                    transport.connection = connection
        return await call_next(ctx)


@dataclass(frozen=True, slots=True)
class _Plain(PlainRequest):
    """A request that passed every check the SDK makes before its session runs a `tools/call`."""

    connection: Connection
    dispatcher: JSONRPCDispatcher[Any]


class PlainSessionTransport(PerRequestTransport):
    """A handshake-era session's transport that serves its plain calls itself (the SDK the rest)."""

    calls: SessionCalls | None = None
    connection: Connection | None = None
    _serving: set[anyio.CancelScope] | None = None

    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        calls = self.calls
        call = await self._plain(calls, scope, receive) if calls is not None else None
        if calls is None or call is None:
            await super()._handle_request(scope, receive, send)
            return
        await self._serve(calls, call, scope, receive, send)

    async def terminate(self) -> None:
        """The session ends: its plain calls in flight end with it, as the SDK's would."""
        await super().terminate()
        for serving in list(self._serving or ()):
            serving.cancel()

    async def _plain(self, calls: SessionCalls, scope: Scope, receive: Receive) -> _Plain | None:
        """The request as a plain call of this session, or None (the SDK serves it)."""
        connection = self.connection
        if (
            connection is None
            or scope.get("method") != "POST"
            or self._terminated
            or self._read_stream_writer is None
            or not self.is_json_response_enabled  # this request is answered over SSE
            or not connection.initialize_accepted
            or self.mcp_session_id in calls.logging
            or _askable(connection)
        ):
            return None
        dispatcher = connection.outbound
        if not isinstance(dispatcher, JSONRPCDispatcher):
            return None
        request = Request(scope, receive)
        if await self._security.validate_request(request, is_post=True) is not None:
            return None
        if not check_accept_headers(request)[0] or not self._check_content_type(request):
            return None
        if request.headers.get(MCP_SESSION_ID_HEADER) != self.mcp_session_id:
            return None
        message = request_message(request_document(scope), envelope=False)
        if message is None:
            return None
        _, request_id, params = message
        if str(request_id) in self._request_streams or coerce_request_id(request_id) in dispatcher._in_flight:
            return None  # an id already in flight: the SDK's own (odd) handling of the clash
        return _Plain(request, request_id, params, connection, dispatcher)

    async def _serve(
        self, calls: SessionCalls, call: _Plain, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Run the call through the SDK's runner on the session's connection; answer as the SDK does."""
        exchange = OneExchange(
            transport=TransportContext(kind="jsonrpc", can_send_request=False),
            request_id=call.request_id,
            message_metadata=ServerMessageMetadata(request_context=call.request, can_send_request=False),
        )
        serving = anyio.CancelScope()
        key = coerce_request_id(call.request_id)
        entry = _InFlight(scope=serving, dctx=cast(Any, exchange))
        call.dispatcher._in_flight[key] = entry  # a `notifications/cancelled` for it cancels `serving`
        if self._serving is None:
            self._serving = set()
        self._serving.add(serving)
        reply: JSONRPCResponse | JSONRPCError | None = None
        try:
            with serving:
                runner = ServerRunner(calls.server, call.connection, calls.lifespan_state())
                try:
                    result = await runner.on_request(exchange, _METHOD, call.params)
                except Exception as exc:
                    reply = JSONRPCError(jsonrpc="2.0", id=call.request_id, error=_error_data(exc))
                else:
                    reply = JSONRPCResponse(jsonrpc="2.0", id=call.request_id, result=result)
        finally:
            self._serving.discard(serving)
            if call.dispatcher._in_flight.get(key) is entry:
                del call.dispatcher._in_flight[key]
        if serving.cancelled_caught and self._terminated:
            ended = "Session terminated before the request completed"
            response = self._create_error_response(ended, HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR)
        else:
            if exchange.cancel_requested.is_set() or reply is None:
                cancelled = ErrorData(code=REQUEST_CANCELLED, message="Request cancelled")
                reply = JSONRPCError(jsonrpc="2.0", id=call.request_id, error=cancelled)
            response = self._create_json_response(reply)
        await response(scope, receive, send)


def _askable(connection: Connection) -> bool:
    """Whether the session's client declared something the gateway could ask it during a call."""
    caps = connection.client_capabilities
    return caps is not None and any((caps.elicitation, caps.sampling, caps.roots))


def _error_data(exc: Exception) -> ErrorData:
    """As the session's dispatcher answers a handler's exception."""
    error = handler_exception_to_error_data(exc)
    if error is not None:
        return error
    logger.exception("handler for %r raised", _METHOD)
    return ErrorData(code=0, message=str(exc))
