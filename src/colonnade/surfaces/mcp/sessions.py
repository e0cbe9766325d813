"""Bounded MCP sessions: one caller cannot fill the session table and lock the others out.

Handshake-era clients (2025-11-25 and older) hold a session between requests. The SDK's session
manager bounds only the total, first come first served: 10,000 `initialize` calls from one
caller filled it, and everyone else got 503 until those sessions expired half an hour later.
Here every session belongs to a caller (the edge's principal; an anonymous caller by its
address), and all session managers of the app (the gateway's `/mcp` and each server's own)
share one `SessionLedger`. A caller opening a session past its bound closes its own least
recently used idle session; at the total bound, the idle session closed is the least recently
used one of the caller holding the most. A session with a request in flight (an open GET stream
included) is never closed to make room: when no idle session can go, the new one is refused with
the retryable `R-CAP-SESSIONS`, `Retry-After` and `retry_after_ms`. Idle sessions expire after
`idle_s` (the SDK's idle timer). A session answers only the principal that opened it.

With shared session records (`SessionLedger.records`, when the gateway has Redis), a session opened
on one replica is served by any other: its record is written before the `initialize` answer
leaves, and a replica that meets an id it does not hold rebuilds the initialized session from it
(`_restore`; the choice and its measure are in `session_records.py`).

A manager whose default is one JSON body per request (the gateway's `/mcp`) answers a request over
SSE when only a stream can carry what it asked for (`request_streams.py`): a progress token, a
2026-07-28 `_meta` log level, a tool call of a session that set a log level, and every request of
a session whose client can be asked (it declared elicitation; `session_streams`). With plain calls
on, a plain 2026-07-28 tool call answered with one JSON body runs in its HTTP request's task,
beside the SDK's transport (`plain_call.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast
from uuid import uuid4

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    AuthorizationContext,
    authorization_context,
)
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import RequestBodyLimitMiddleware, StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.transport_context import TransportContext
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel
from starlette.types import Receive, Scope, Send

from colonnade.calls.call_errors import error
from colonnade.governance.principal import PrincipalKind
from colonnade.surfaces.admission import retry_after_header
from colonnade.surfaces.edge import principal_of_scope, request_body
from colonnade.surfaces.mcp.announcer import connection_of
from colonnade.surfaces.mcp.event_store import MemoryEventStore
from colonnade.surfaces.mcp.plain_call import plain_call, serve_plain_call
from colonnade.surfaces.mcp.request_streams import (
    LeaveWatch,
    PerRequestTransport,
    answering,
    chosen,
    wants_stream,
)
from colonnade.surfaces.mcp.session_records import SessionRecord, SessionRecords

__all__ = [
    "DEFAULT_SESSION_LIMITS",
    "BoundedSessionManager",
    "SessionLedger",
    "SessionLimits",
    "caller_key",
]

logger = logging.getLogger(__name__)
_NOT_FOUND = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'
_STREAM_NOT_FOUND = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Stream not found: its events are gone '
    b'(the replica that served it stopped, or they were dropped for room); the session goes on"}}'
)
_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode()
# What a session negotiates after `initialize` that a replica serving it must know too.
_RECORDED = frozenset({"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """How many sessions one caller and all callers may hold, and how long an idle one lives."""

    per_caller: int = 32
    total: int = 1000
    idle_s: float = 300.0
    retry_after_ms: int = 1000
    """What a refused caller is told to wait: its sessions in flight hold the room until they end."""


DEFAULT_SESSION_LIMITS = SessionLimits()


def caller_key(scope: Mapping[str, Any]) -> str:
    """Whose sessions these are: the principal, or for anonymous callers (one principal) also the address."""
    principal = principal_of_scope(scope)
    if principal.kind is not PrincipalKind.ANONYMOUS:
        return principal.key
    client = scope.get("client")
    return f"{principal.key}@{client[0] if client else 'unknown'}"


@dataclass(slots=True)
class _Held:
    owner: str
    principal: str
    close: Callable[[], None]
    last_used: float
    in_flight: int = 0


class SessionLedger:
    """Who holds which session, across every session manager of the app; decides what to close for room."""

    def __init__(
        self, limits: SessionLimits = DEFAULT_SESSION_LIMITS, *, records: SessionRecords | None = None
    ) -> None:
        """With `records` (shared by replicas), every manager's sessions can be served by any replica."""
        self.limits = limits
        self.records = records
        self._held: dict[str, _Held] = {}
        self._by_owner: dict[str, dict[str, _Held]] = {}
        self.evicted = 0
        self.refused = 0

    def held(self, owner: str | None = None) -> int:
        """Sessions held by `owner`, or by everyone."""
        if owner is None:
            return len(self._held)
        return len(self._by_owner.get(owner, ()))

    @property
    def callers(self) -> int:
        return len(self._by_owner)

    def principal_of(self, session_id: str) -> str | None:
        held = self._held.get(session_id)
        return held.principal if held is not None else None

    def owner_of(self, session_id: str) -> str | None:
        held = self._held.get(session_id)
        return held.owner if held is not None else None

    def make_room(self, owner: str) -> bool:
        """Close what must go for `owner` to open one more session; False if nothing idle may go."""
        if self.held(owner) >= self.limits.per_caller:
            return self._close_oldest_idle(owner)
        if len(self._held) >= self.limits.total:
            by_size = sorted(self._by_owner, key=lambda name: -len(self._by_owner[name]))
            return any(self._close_oldest_idle(name) for name in by_size)
        return True

    def hold(self, session_id: str, owner: str, principal: str, close: Callable[[], None]) -> None:
        """Record a new session, in flight (its opening request is being served)."""
        held = _Held(owner, principal, close, time.monotonic(), in_flight=1)
        self._held[session_id] = held
        self._by_owner.setdefault(owner, {})[session_id] = held

    def enter(self, session_id: str) -> None:
        held = self._held.get(session_id)
        if held is not None:
            held.in_flight += 1
            held.last_used = time.monotonic()

    def leave(self, session_id: str) -> None:
        held = self._held.get(session_id)
        if held is not None:
            held.in_flight -= 1
            held.last_used = time.monotonic()

    def release(self, session_id: str) -> None:
        """Forget a session that ended (closed by its client, expired, evicted or never established)."""
        held = self._held.pop(session_id, None)
        if held is None:
            return
        mine = self._by_owner.get(held.owner)
        if mine is not None:
            mine.pop(session_id, None)
            if not mine:
                del self._by_owner[held.owner]

    def _close_oldest_idle(self, owner: str) -> bool:
        idle = [
            (held.last_used, sid) for sid, held in self._by_owner.get(owner, {}).items() if not held.in_flight
        ]
        if not idle:
            return False
        _, session_id = min(idle)
        held = self._held[session_id]
        self.release(session_id)
        self.evicted += 1
        held.close()
        return True


class BoundedSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, with each session counted against its caller in a shared ledger.

    The SDK serves every request; this manager only decides, before it does, which requests a
    session may make (the ledger, the principal that opened it) and how each is answered. It opens
    a session itself (`_open`) so that it is counted before its opening request runs, and learns that
    one ended from its transport (`PerRequestTransport.terminate`). The SDK seams it still uses are
    listed in `docs/sdk-seams.md`.
    """

    def __init__(
        self,
        app: Server[Any],
        ledger: SessionLedger,
        *,
        on_end: Callable[[str], object] | None = None,
        session_streams: bool = False,
        plain_calls: bool = False,
        name: str = "mcp",
        on_restore: Callable[[Connection, SessionRecord], None] | None = None,
        **options: Any,
    ) -> None:
        """`on_end` hears a session's id once it is gone (maybe twice), to drop what was kept for it;
        with `session_streams` the session of a client that declares elicitation answers over SSE
        even when `json_response` is on (for stateless requests and other sessions), so that it can
        be asked during a call; SSE costs such a session about 1.2 ms of CPU per call. With
        `plain_calls` (and `json_response`), a plain 2026-07-28 `tools/call` skips the SDK's
        transport machinery (`plain_call.py`). `name` keys this manager's shared session records
        (`mcp`, `servers/<name>`); `on_restore` hears each session rebuilt here from its record, with
        the connection that now speaks for it, to restore what the server keeps per connection, and
        again when another replica changed the record of a session held here."""
        self._json_default = False
        super().__init__(app, session_idle_timeout=ledger.limits.idle_s, max_sessions=None, **options)
        self.ledger = ledger
        self.on_end = on_end
        self.session_streams = session_streams
        self.plain_calls = plain_calls and self.json_response
        self._streamed: set[str] = set()
        self._logging: set[str] = set()
        self._leaving = LeaveWatch()
        self._ending: set[asyncio.Task[None]] = set()
        self._running = False
        self._state: Any = None
        self.name = name
        self.records = ledger.records
        self.on_restore = on_restore
        self._restoring: dict[str, asyncio.Future[bool]] = {}
        self._restored_group: TaskGroup | None = None
        self._connections: dict[str, Connection] = {}
        if self.records is not None:
            app.middleware.append(self._recording)
            self.records.on_ended(name, self._ended_elsewhere)
            self.records.on_changed(name, self._changed_elsewhere)
        app.lifespan = self._seeing_lifespan(app.lifespan)
        self._sdk_app = self.asgi_app
        self._opening_app = RequestBodyLimitMiddleware(self._open_app, self.max_request_body_size)
        self.asgi_app = cast(RequestBodyLimitMiddleware, self._route)  # what the SDK's ASGI app calls

    def _seeing_lifespan(self, inner: Any) -> Any:
        """The server's lifespan, whose state the manager keeps for the plain calls it serves."""

        @contextlib.asynccontextmanager
        async def lifespan(server: Server[Any]) -> AsyncIterator[Any]:
            async with inner(server) as state:
                self._state = state
                yield state

        return lifespan

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with super().run(), anyio.create_task_group() as restored:
            self._restored_group = restored
            self._running = True
            try:
                yield
            finally:
                self._running = False
                self._restored_group = None
                restored.cancel_scope.cancel()

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A plain call is served here, decided before it runs; every other request by the SDK. A
        request that asks for a stream (progress, a log level) is never plain."""
        if scope["type"] != "http" or not self._running:
            await self._sdk_app(scope, receive, send)
            return
        call = None
        if self.plain_calls and not wants_stream(request_body(scope)):
            call = plain_call(scope, receive, self.app, self.max_request_body_size)
        if call is not None:
            plain = call

            async def serve(scope: Scope, reading: Receive, send: Send) -> None:
                await reading()  # the body the edge replays: the client's next message is its leaving
                await serve_plain_call(self.app, self._state, plain, scope, reading, send)

            # Closing the stream is how a 2026-07-28 caller cancels its call.
            await self._leaving.serve(serve, scope, receive, send)
            return
        choice, watched = self._answer_as(scope)
        with answering(choice):
            if watched:
                # Closing the stream is how a 2026-07-28 caller cancels; the SDK's JSON path never looks.
                await self._leaving.serve(self._in_session, scope, receive, send)
            else:
                await self._in_session(scope, receive, send)

    @property
    def json_response(self) -> bool:
        """Read by the SDK for each 2026-07-28 request, in its task: the request's choice, or the default."""
        choice = chosen()
        return self._json_default if choice is None else choice

    @json_response.setter
    def json_response(self, value: bool) -> None:
        self._json_default = value

    def _answer_as(self, scope: Scope) -> tuple[bool | None, bool]:
        """One JSON body (True), SSE (False) or the default (None) for this request, and whether its
        client is watched for leaving (a 2026-07-28 tool call answered with one JSON body).

        With JSON bodies by default, every handshake-era session is an SSE session underneath (so what
        the gateway sends during a request can reach the request's stream) whose plain requests are
        answered with one JSON body; a 2026-07-28 request keeps JSON unless it asks for a stream.
        """
        if not self._json_default or scope.get("method") != "POST":
            return None, False
        session_id, version, sse = _routing_headers(scope)
        body = request_body(scope)
        if session_id is None:  # a 2026-07-28 request, or the `initialize` opening a session (`_open`)
            if wants_stream(body) and sse:
                return False, False
            modern = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
            return None, modern and body is not None and b'"tools/call"' in body
        if session_id in self._streamed:
            return None, False
        if (
            body is not None
            and b'"logging/setLevel"' in body
            and self.ledger.principal_of(session_id) == principal_of_scope(scope).key
        ):  # only a live session, by the principal that opened it: forged ids must not pile up here
            self._logging.add(session_id)
        streams = wants_stream(body) or (
            session_id in self._logging and body is not None and b'"tools/call"' in body
        )
        return not (streams and sse), False

    async def _in_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A handshake-era request: opens a session, or is served in its caller's own; any other
        request (2026-07-28, a stateless manager) goes to the SDK as it is."""
        session_id, version, _ = _routing_headers(scope)
        if self.stateless or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
            await self._sdk_app(scope, receive, send)
            return
        principal = principal_of_scope(scope).key
        if session_id is None:
            await self._opening_app(scope, receive, send)
            return
        opener = self.ledger.principal_of(session_id)
        if opener is not None and opener != principal:
            logger.warning("refusing a request for session %s: another principal opened it", session_id[:64])
            await _answer(send, 404, _NOT_FOUND)
            return
        records = self.records
        if records is not None:
            if opener is None and session_id not in self._server_instances:
                if not await self._restore_once(session_id, principal, send):
                    return
                # Answered as the session's own requests are, now that this replica knows it.
                with answering(self._answer_as(scope)[0]):
                    await self._serve_held(session_id, records, scope, receive, send)
                return
            await self._serve_held(session_id, records, scope, receive, send)
            return
        await self._serve_held(session_id, None, scope, receive, send)

    async def _serve_held(
        self, session_id: str, records: SessionRecords | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A request of a session this replica holds, by the principal that opened it."""
        if records is not None:
            if scope.get("method") == "DELETE":
                await records.end(self.name, session_id)  # before the answer: no replica serves it after
            else:
                records.touch(self.name, session_id)
        if scope.get("method") == "GET" and self._lost_stream(scope):
            await _answer(send, 404, _STREAM_NOT_FOUND)
            return
        self.ledger.enter(session_id)
        try:
            await self._sdk_app(scope, receive, send)
        finally:
            self.ledger.leave(session_id)

    def _lost_stream(self, scope: Scope) -> bool:
        """Whether a GET resumes a stream (`Last-Event-ID`) whose events this replica does not have:
        none are kept (no event store), or the stream was served by another replica (one that died)
        or its events were dropped for room. The SDK would answer with no response at all, or an
        empty stream the client reopens forever; 404 ends the client's wait for that stream."""
        last_event_id = next((v for k, v in scope.get("headers", ()) if k == b"last-event-id"), None)
        if last_event_id is None:
            return False
        store = self.event_store
        if store is None:
            return True
        return isinstance(store, MemoryEventStore) and not store.knows(last_event_id.decode("latin-1"))

    async def _restore_once(self, session_id: str, principal: str, send: Send) -> bool:
        """Serve a session this replica does not hold from its shared record; False once answered
        (404 for an unknown id or another principal's, 503 without room). Concurrent requests of one
        session wait for a single restore."""
        pending = self._restoring.get(session_id)
        if pending is not None:
            restored = await asyncio.shield(pending)
            if restored and self.ledger.principal_of(session_id) == principal:
                return True
            await _answer(send, 404, _NOT_FOUND)
            return False
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._restoring[session_id] = future
        restored = False
        try:
            restored = await self._restore(session_id, principal, send)
        finally:
            future.set_result(restored)
            del self._restoring[session_id]
        return restored

    async def _restore(self, session_id: str, principal: str, send: Send) -> bool:
        assert self.records is not None
        record = await self.records.fetch(self.name, session_id)
        if record is None:
            await _answer(send, 404, _NOT_FOUND)
            return False
        if record.principal != principal:
            logger.warning("refusing a request for session %s: another principal opened it", session_id[:64])
            await _answer(send, 404, _NOT_FOUND)
            return False
        if session_id in self._server_instances:  # opened here meanwhile (a record read twice)
            return True
        if not self.ledger.make_room(record.owner):
            self.ledger.refused += 1
            await self._refuse(send, record.owner)
            return False
        requestor = cast(AuthorizationContext, record.requestor) if record.requestor is not None else None
        transport = self._new_session(requestor, session_id)
        client = record.client_params()
        if self.session_streams and self._json_default and client.capabilities.elicitation is not None:
            self._streamed.add(session_id)
        if record.log_level is not None:
            self._logging.add(session_id)
        self.ledger.hold(session_id, record.owner, record.principal, lambda: self._close(session_id))
        self.restored(session_id, record)
        group = self._restored_group
        try:
            assert group is not None, "the manager serves only while it runs"
            await group.start(self._serve_restored, transport, record)
        except BaseException:
            self._forget(session_id, transport)
            await transport.terminate()
            raise
        finally:
            self.ledger.leave(session_id)  # held in flight while it starts: never evicted half-made
        self.records.restored(record)
        logger.debug("serving MCP session %s, opened by replica %s", session_id[:64], record.opened_by)
        return True

    def restored(self, session_id: str, record: SessionRecord) -> None:
        """A session is about to be served here from its record: for subclasses to note it."""

    async def _serve_restored(
        self,
        transport: PerRequestTransport,
        record: SessionRecord,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """The server task of a session rebuilt from its record: as the SDK's own for a session it
        opens (`_serve_opening_request`, `serve_loop`), but with a connection already initialized
        with what the session negotiated, so its next request is served without a new `initialize`."""
        session_id = record.session_id
        async with transport.connect() as (read_stream, write_stream):
            task_status.started()
            try:
                idle_scope = transport.idle_scope if transport.idle_scope is not None else anyio.CancelScope()
                with idle_scope:
                    dispatcher: JSONRPCDispatcher[TransportContext] = JSONRPCDispatcher(
                        read_stream, write_stream, inline_methods=frozenset({"initialize"})
                    )
                    connection = Connection.for_loop(
                        dispatcher, session_id=session_id, protocol_version_hint=record.protocol_version
                    )
                    connection.client_params = record.client_params()
                    connection.protocol_version = record.protocol_version
                    connection.initialized.set()
                    self._connections[session_id] = connection
                    if self.on_restore is not None:
                        self.on_restore(connection, record)
                    await serve_connection(
                        self.app, dispatcher, connection=connection, lifespan_state=self._state
                    )
            except Exception:
                logger.exception("MCP session %s (restored from its record) crashed", session_id[:64])
            finally:
                self._forget(session_id, transport)
                if not transport.is_terminated:
                    with anyio.CancelScope(shield=True):
                        await transport.terminate()

    async def _recording(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: what a session negotiates goes into its shared record before the answer."""
        result = await call_next(ctx)
        method = ctx.method
        if method in _RECORDED and ctx.session is not None:
            session_id = getattr(connection_of(ctx.session), "session_id", None)
            if isinstance(session_id, str):
                try:
                    await self._record(method, session_id, ctx, result)
                except Exception:  # the session still works on this replica; say why it may not elsewhere
                    logger.exception("recording MCP session %s for other replicas failed", session_id[:64])
        return result

    async def _record(
        self, method: str, session_id: str, ctx: ServerRequestContext[Any, Any], result: HandlerResult
    ) -> None:
        records = self.records
        assert records is not None
        params = dict(ctx.params or {})
        if method == "initialize":
            answer = result.model_dump(by_alias=True) if isinstance(result, BaseModel) else result
            version = answer.get("protocolVersion") if isinstance(answer, Mapping) else None
            principal, owner = self.ledger.principal_of(session_id), self.ledger.owner_of(session_id)
            if not isinstance(version, str) or principal is None or owner is None:
                return
            requestor = self._session_owners.get(session_id)
            params.pop("_meta", None)
            record = SessionRecord(
                session_id=session_id,
                endpoint=self.name,
                principal=principal,
                owner=owner,
                protocol_version=version,
                client=params,
                requestor=dict(requestor) if requestor is not None else None,
                opened_by=records.replica_id,
            )
            connection = connection_of(ctx.session)
            if isinstance(connection, Connection):
                self._connections[session_id] = connection
            await records.put(record)
            return
        held = records.known(self.name, session_id)
        if held is None:
            return
        if method == "logging/setLevel":
            await records.update(self.name, session_id, tell=True, log_level=str(params.get("level")))
            return
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        subscribed = set(held.subscriptions)
        if method == "resources/subscribe":
            subscribed.add(uri)
        else:
            subscribed.discard(uri)
        await records.update(self.name, session_id, subscriptions=tuple(sorted(subscribed)))

    async def _open_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._open(scope, receive, send, principal_of_scope(scope).key)

    async def _open(self, scope: Scope, receive: Receive, send: Send, principal: str) -> None:
        owner = caller_key(scope)
        if not self.ledger.make_room(owner):
            self.ledger.refused += 1
            await self._refuse(send, owner)
            return
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        transport = self._new_session(requestor)
        session_id = transport.mcp_session_id
        assert session_id is not None
        streamed = self.session_streams and declares_elicitation(scope)
        if streamed and self._json_default:
            self._streamed.add(session_id)
        self.opened(session_id, scope)
        self.ledger.hold(session_id, owner, principal, lambda: self._close(session_id))
        try:
            with answering(None if streamed or not self._json_default else True):
                await self._serve_opening_request(transport, scope, receive, send)
        finally:
            self.ledger.leave(session_id)

    def opened(self, session_id: str, scope: Scope) -> None:
        """A session is about to serve its opening request (`scope`): for subclasses to note it."""

    def _new_session(
        self, requestor: AuthorizationContext | None, session_id: str | None = None
    ) -> PerRequestTransport:
        """A new session registered as the SDK's manager registers one (its `_admit_session`, with
        this manager's transport class and without its bound: the ledger bounds sessions); with
        `session_id`, a session another replica opened."""
        transport = PerRequestTransport(
            mcp_session_id=session_id if session_id is not None else uuid4().hex,
            # The session's own setting is read by its message router for what the gateway sends during
            # a request: SSE, so it reaches the request's stream when the request is answered over SSE.
            is_json_response_enabled=False,
            event_store=self.event_store,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
        )
        transport.on_terminated = self._ended
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        return transport

    def _close(self, session_id: str) -> None:
        """Evicted for room: forgotten at once, its transport ended in the background. Its id answers
        404 here; with shared records only this replica's copy goes (the room is this replica's
        memory; the session may be in use on another), and its next request here rebuilds it."""
        self._close_here(session_id)

    def _changed_elsewhere(self, record: SessionRecord) -> None:
        """Another replica changed a session held here (its log level): this copy follows."""
        session_id = record.session_id
        if record.log_level is not None:
            self._logging.add(session_id)
        connection = self._connections.get(session_id)
        if connection is not None and self.on_restore is not None:
            self.on_restore(connection, record)

    def _ended_elsewhere(self, session_id: str) -> None:
        """Another replica ended the session (its client's DELETE): close this copy."""
        self.ledger.release(session_id)
        self._close_here(session_id)

    def _forget(self, session_id: str, transport: PerRequestTransport) -> None:
        if self._server_instances.get(session_id) is transport:
            del self._server_instances[session_id]
            self._session_owners.pop(session_id, None)

    def _close_here(self, session_id: str) -> None:
        transport = self._server_instances.pop(session_id, None)
        self._session_owners.pop(session_id, None)
        if transport is not None:
            task = asyncio.get_running_loop().create_task(transport.terminate())
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)

    def _ended(self, session_id: str) -> None:
        """A session's transport terminated (client DELETE, idle timeout, eviction, failed opening)."""
        self.ledger.release(session_id)
        self._streamed.discard(session_id)
        self._logging.discard(session_id)
        self._connections.pop(session_id, None)
        if self.records is not None:
            self.records.forget(self.name, session_id)
        if self.on_end is not None:
            self.on_end(session_id)

    async def _refuse(self, send: Send, owner: str) -> None:
        limits = self.ledger.limits
        at_own_bound = self.ledger.held(owner) >= limits.per_caller
        reason = "per_caller" if at_own_bound else "total"
        bound = limits.per_caller if at_own_bound else limits.total
        whose = "this caller holds its" if at_own_bound else "all callers together hold the gateway's"
        _, err = error(
            "R-CAP-SESSIONS",
            f"{whose} bound of {bound} MCP sessions, each with a request in flight",
            reason=reason,
            limit=bound,
            retry_after_ms=limits.retry_after_ms,
        )
        body = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": err.message, "data": err.model_dump()},
        }
        content = json.dumps(body, separators=(",", ":")).encode()
        await _answer(send, 503, content, retry_after_header(limits.retry_after_ms))


async def _answer(send: Send, status: int, content: bytes, retry_after: bytes | None = None) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", retry_after))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


def _routing_headers(scope: Scope) -> tuple[str | None, str | None, bool]:
    """The session id, the protocol version, and whether the client accepts an SSE answer (the SDK
    refuses a request it would stream otherwise): one pass over the headers."""
    session_id = version = None
    sse = False
    for key, value in scope.get("headers", ()):
        if key == _SESSION_HEADER:
            session_id = value.decode("latin-1")
        elif key == b"mcp-protocol-version":
            version = value.decode("latin-1")
        elif key == b"accept":
            sse = b"text/event-stream" in value
    return session_id, version, sse


def declares_elicitation(scope: Scope) -> bool:
    """Whether the request opening a session is an `initialize` whose client declares elicitation
    (the body the edge checked; anything unreadable declares nothing)."""
    body = request_body(scope)
    if body is None:
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    params = message.get("params") if isinstance(message, dict) else None
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    return isinstance(capabilities, dict) and capabilities.get("elicitation") is not None
