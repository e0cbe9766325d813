"""One downstream MCP server re-served under its own names: a drop-in replacement that stays governed.

At `/servers/{name}/mcp` a client sees the server's tools, prompts, resources and completions with
their original names, as the server answers them (schemas, content blocks, `_meta`, cache hints,
pagination, JSON-RPC errors). Tool calls still run the whole call pipeline, as the caller's
principal, under the tool's canonical name `{tenant}:{name}:{tool}`; the other requests go to the
server on its pooled session. What the server exchanges with the caller during a request travels
through an `EndpointRelay`: progress and log messages, and its questions (sampling, elicitation,
roots) - passed back as input rounds to 2026-07-28 clients, asked on the request's stream of a
handshake-era client. A handshake-era client of an HTTP server that speaks 2026-07-28 is served
through a handshake-era session of its own (the pool's twin), so it meets the server's own
handshake-era behaviour, stream closes included; a tool call on which only the answer can pass
(no progress, log messages or questions: `Relay.needs_handshake_session`) takes the server's own
session, as on `/mcp`, which is cheaper by most of a millisecond. A refusal by the gateway (not allowed, needs
approval, invalid arguments) is a typed result, as on `/mcp`; a server that cannot take requests
(held misconfigured or unadmitted, stopped, restarting) is a JSON-RPC error with the same stable code
and fix (`unavailable.py`).
"""

from __future__ import annotations

import asyncio
import difflib
import weakref
from collections.abc import Callable
from typing import Any, Protocol, cast, get_args

import mcp_types as types
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import ListenHandler, ServerEvent
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.methods import is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colonnade import __version__
from colonnade.calls.call_errors import INPUT_REQUIRED
from colonnade.calls.envelope import CallResult
from colonnade.calls.service import CallService
from colonnade.catalog.catalog_errors import InvalidCanonicalName
from colonnade.catalog.mcp_projection import served, side_effects_of
from colonnade.catalog.naming import join_canonical
from colonnade.catalog.tool_pins import definition_of
from colonnade.contracts.model import SideEffects
from colonnade.governance.authorization import Authorizer, permits
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal
from colonnade.mcp_relay.answer import UpstreamDown, answer_of
from colonnade.mcp_relay.relay import Relay
from colonnade.surfaces.envelope_parsing import EnvelopeRejection
from colonnade.surfaces.mcp.announcer import Announcer, connection_of
from colonnade.surfaces.mcp.call_envelope import call_request
from colonnade.surfaces.mcp.caller import principal_of
from colonnade.surfaces.mcp.event_store import MemoryEventStore
from colonnade.surfaces.mcp.proxy.endpoint_sessions import EndpointSessions
from colonnade.surfaces.mcp.proxy.resource_watch import ResourceWatch
from colonnade.surfaces.mcp.proxy.served_upstream import Build, ServedUpstream
from colonnade.surfaces.mcp.proxy.unavailable import held_call, held_error
from colonnade.surfaces.mcp.render import as_served, proxied_replay, render_answer, render_result
from colonnade.surfaces.mcp.round_state import open_state, seal_state
from colonnade.surfaces.mcp.sdk_spans import drop_idle_sdk_spans
from colonnade.surfaces.mcp.session_records import SessionRecord
from colonnade.surfaces.mcp.sessions import SessionLedger

__all__ = ["PROGRESS_KEYS", "EndpointRelay", "UpstreamEndpoint", "Upstreams"]

Ctx = ServerRequestContext[Any, Any]

RETRY_INTERVAL_MS = 1000
_NO_SDK_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)
# How a caller's progress token appears in the request's `_meta` (as sent, or as the SDK parsed it);
# the server gets the token the gateway's session gives it, never the caller's.
PROGRESS_KEYS = frozenset({"progressToken", "progress_token"})
_RESERVED_META = frozenset(
    {
        types.PROTOCOL_VERSION_META_KEY,
        types.CLIENT_INFO_META_KEY,
        types.CLIENT_CAPABILITIES_META_KEY,
        types.LOG_LEVEL_META_KEY,
        *PROGRESS_KEYS,
    }
)
_LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
# A server that gives no cache hints gets these: immediately stale, never shared.
_STALE: dict[CacheableMethod, CacheHint] = {
    method: CacheHint(0, "private") for method in get_args(CacheableMethod)
}
# Errors the gateway itself produced while waiting, or reading an answer it could not parse:
# typed results (`D-DATA-MALFORMED` for the last, as on `/mcp`), not the server's own errors.
_LOCAL_ERRORS = frozenset({types.REQUEST_TIMEOUT, types.CONNECTION_CLOSED, types.PARSE_ERROR})


class EndpointRelay(Relay):
    """The calling client's connection: its capabilities, progress, logs, and how to ask it."""

    def __init__(self, ctx: Ctx, *, log_level: types.LoggingLevel | None, **fields: Any) -> None:
        super().__init__(log_level=log_level, **fields)
        self.ctx = ctx
        self.modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def passes_input_rounds(self) -> bool:
        return self.modern

    @property
    def handshake_era(self) -> bool:
        return not self.modern

    @property
    def follows_stream_closes(self) -> bool:
        return self.ctx.close_sse_stream is not None

    async def stream_closed(self) -> None:
        if self.ctx.close_sse_stream is not None:
            await self.ctx.close_sse_stream()

    @property
    def can_ask(self) -> bool:
        return not self.modern and self.ctx.session.can_send_request

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.ctx.session.report_progress(progress, total, message)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self.log_level is None or _LEVELS.index(params.level) < _LEVELS.index(self.log_level):
            return
        if not self.modern and not self.ctx.session.can_send_request:
            return  # a request answered with one JSON body: it carries the answer only
        notification = types.LoggingMessageNotification(params=params)
        await self.ctx.session.send_notification(notification, related_request_id=self.ctx.request_id)

    async def ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        if not self.can_ask:
            return await super().ask(request)
        metadata = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        try:
            if isinstance(request, types.CreateMessageRequest):
                wants_tools = bool(request.params.tools or request.params.tool_choice)
                kind = types.CreateMessageResultWithTools if wants_tools else types.CreateMessageResult
                return await self.ctx.session.send_request(request, kind, metadata=metadata)
            if isinstance(request, types.ElicitRequest):
                return await self.ctx.session.send_request(request, types.ElicitResult, metadata=metadata)
            return await self.ctx.session.send_request(request, types.ListRootsResult, metadata=metadata)
        except MCPError as exc:
            return exc.error


class _EndpointServer(Server[Any]):
    """Announces every list change, and offers what the downstream server offers (once it is known)."""

    def __init__(self, upstream: ServedUpstream, **handlers: Any) -> None:
        super().__init__(
            f"colonnade/{upstream.name}",
            version=__version__,
            title=f"{upstream.name} (through Colonnade)",
            cache_hints=_STALE,
            **handlers,
        )
        self.upstream = upstream

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        everything = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        return super().create_initialization_options(
            notification_options or everything, experimental_capabilities, extensions
        )

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        ours = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        theirs = self.upstream.server_capabilities
        if theirs is None:
            return ours
        return ours.model_copy(
            update={
                "prompts": ours.prompts if theirs.prompts else None,
                "resources": ours.resources if theirs.resources else None,
                "completions": ours.completions if theirs.completions else None,
                "logging": ours.logging if theirs.logging else None,
            }
        )


class Upstreams(Protocol):
    """The runtime's pool of server sessions, as an endpoint reaches it (the composition root hands
    it over: a surface never imports the pool)."""

    def for_caller(self, name: str, *, handshake_era: bool) -> ServedUpstream | None:
        """The session a caller of that era talks to: the server's own, or its handshake-era twin."""


Admitted = Callable[[str, str], dict[str, Any] | None]
"""(server, tool name) -> the tool's admitted definition, or None while it waits for admission."""


class UpstreamEndpoint:
    """Build one per server; `manager.asgi_app` serves it once `manager.run()` is entered."""

    def __init__(
        self,
        upstream: ServedUpstream,
        pool: Upstreams,
        calls: CallService,
        *,
        authorizer: Authorizer,
        principal: Principal = ANONYMOUS_LOOPBACK,
        sessions: SessionLedger | None = None,
        plain_calls: bool = True,
        sdk_spans: bool = True,
        admitted: Admitted | None = None,
    ) -> None:
        """`plain_calls` serves a plain 2026-07-28 `tools/call` beside the SDK's transport, as on
        `/mcp` (`server.mcp_plain_calls`); `sdk_spans=False` (the gateway records no spans) drops the
        SDK's span per request, as on `/mcp` (`sdk_spans.py`). `admitted(server, tool)` is a tool's
        admitted definition (docs/change-control.md): a listing shows only admitted tools, each as
        it was admitted."""
        self.admitted = admitted
        self.upstream = upstream
        self.pool = pool
        self.calls = calls
        self.authorizer = authorizer
        self.principal = principal
        self.announcer = Announcer()
        self._levels: weakref.WeakKeyDictionary[object, types.LoggingLevel] = weakref.WeakKeyDictionary()
        self._listener = ListenHandler(self.announcer.bus)
        self.watch = ResourceWatch(upstream, shared=self._subscribed_alike)
        self._releasing: set[asyncio.Task[None]] = set()
        self.server = _EndpointServer(
            upstream,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_completion=self._complete,
            on_set_logging_level=self._set_level,
            on_subscriptions_listen=self._listen,
        )
        drop_idle_sdk_spans(self.server, sdk_spans=sdk_spans)
        self.server.middleware.append(self.announcer.remember)
        self.manager = EndpointSessions(
            self.server,
            sessions if sessions is not None else SessionLedger(),
            server_is_quiet=self._server_is_quiet,
            on_end=self._session_ended,
            event_store=MemoryEventStore(),
            retry_interval=RETRY_INTERVAL_MS,
            security_settings=_NO_SDK_CHECK,
            json_response=True,
            plain_calls=plain_calls,
            name=f"servers/{upstream.name}",
            on_restore=self._restored,
        )

    @property
    def name(self) -> str:
        return self.upstream.name

    def _server_is_quiet(self) -> bool:
        """Whether the server will send handshake-era callers no log messages (its handshake-era
        session's capabilities, or its own session's while that twin is not up)."""
        upstream = self.pool.for_caller(self.name, handshake_era=True) or self.upstream
        caps = upstream.server_capabilities or self.upstream.server_capabilities  # the twin not up yet
        return caps is not None and caps.logging is None

    async def announce(self, event: ServerEvent) -> None:
        await self.announcer.announce(event)

    # -- tools ---------------------------------------------------------------------------------

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        for tool in self.upstream.tools:
            if tool.name == name:
                return tool.input_schema
        return None

    async def _list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        cursor = params.cursor if params is not None else None

        def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            return types.ListToolsRequest(params=types.PaginatedRequestParams(cursor=cursor, _meta=meta))

        answer = await self._forward(ctx, params, build)
        listed = [tool for tool in answer.get("tools") or [] if isinstance(tool, dict)]
        if cursor is None and answer.get("nextCursor") is None:
            self._accept(listed)
        allowed = self.authorizer.visible(self._principal(ctx))
        pinned = [tool for tool in map(self._pinned, listed) if tool is not None]
        shown = [self._override(tool) for tool in pinned if self._shows(allowed, str(tool.get("name")))]
        return {**answer, "tools": shown}

    def _pinned(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        """The tool as admitted; None while it waits for admission (quarantined or new)."""
        if self.admitted is None:
            return tool
        definition = self.admitted(self.upstream.name, str(tool.get("name")))
        if definition is None:
            return None
        try:
            if definition_of(types.Tool.model_validate(tool, by_name=False)) == definition:
                return tool  # as the server lists it: the transparent case
        except ValidationError:
            return None
        hints = definition.get("annotations")
        wire = {
            "name": definition["name"],
            "title": definition.get("title"),
            "description": definition.get("description"),
            "inputSchema": definition.get("input_schema"),
            "outputSchema": definition.get("output_schema"),
            "annotations": types.ToolAnnotations(**hints).model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
            if hints
            else None,
        }
        kept = {key: value for key, value in tool.items() if key not in wire}
        return {**kept, **{key: value for key, value in wire.items() if value is not None}}

    def _accept(self, listed: list[dict[str, Any]]) -> None:
        """A complete listing keeps the catalog current (a tool the server just added is callable)."""
        try:
            tools = tuple(types.Tool.model_validate(tool, by_name=False) for tool in listed)
        except ValidationError:
            return
        self.upstream.accept_tools(tools)

    def _shows(self, allowed: Any, name: str) -> bool:
        settings = self.upstream.settings
        if not served(settings, name):
            return False
        try:
            canonical = join_canonical(settings.tenant, settings.name, name)
        except InvalidCanonicalName:
            return False
        return permits(allowed, canonical)

    def _override(self, tool: dict[str, Any]) -> dict[str, Any]:
        """The operator's description and side effects win over the server's."""
        override = self.upstream.settings.tools.get(str(tool.get("name")))
        if override is None:
            return tool
        changed = dict(tool)
        if override.description is not None:
            changed["description"] = override.description
        if override.side_effects is not None:
            effects = side_effects_of(None, override)
            hints = dict(changed.get("annotations") or {})
            hints["readOnlyHint"] = effects in (SideEffects.NONE, SideEffects.READ)
            hints["destructiveHint"] = effects is SideEffects.DESTRUCTIVE
            changed["annotations"] = hints
        return changed

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> Any:
        settings = self.upstream.settings
        legacy = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        try:
            canonical = join_canonical(settings.tenant, settings.name, params.name)
        except InvalidCanonicalName:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name!r}") from None
        headers = getattr(ctx.request, "headers", None)  # the HTTP request's
        request = call_request(canonical, dict(params.arguments or {}), dict(params.meta or {}), headers)
        if isinstance(request, EnvelopeRejection):
            return render_result(request.result(), legacy=legacy)
        session_id = headers.get("mcp-session-id") if headers is not None else None
        result = await self.calls.call(
            request, self._principal(ctx), channel=self._relay(ctx, params), session_id=session_id
        )
        if result.error is not None and result.error.code == _UNKNOWN_TOOL:
            refused = self.upstream.unavailable()
            if refused is not None and not self.upstream.tools:  # held before its tools were listed
                result = held_call(result, self.name, params.name, refused)
            else:
                result = self._unknown_here(ctx, result, params.name)
        return _rendered(result, legacy=legacy)

    def _unknown_here(self, ctx: Ctx, result: CallResult, name: str) -> CallResult:
        """An unknown tool, named as this endpoint's client named it, with this server's tools as guesses
        (not canonical names of other servers, which cannot be called here)."""
        assert result.error is not None
        allowed = self.authorizer.visible(self._principal(ctx))
        names = [tool.name for tool in self.upstream.tools if self._shows(allowed, tool.name)]
        near = difflib.get_close_matches(name, names, n=3)
        message = f"no tool named {name!r} on server {self.upstream.name!r}"
        if near:
            message += f"; did you mean {' or '.join(repr(n) for n in near)}?"
        details = {"tool_id": name, "server": self.upstream.name, "did_you_mean": near}
        error = result.error.model_copy(update={"message": message, "details": details})
        return result.model_copy(update={"error": error})

    # -- what the aggregated `/mcp` asks of this server (`proxy/aggregate.py`) -----------------------

    def offers(self, method: str) -> bool:
        """Whether the server's capabilities include the list `method` belongs to (unknown: yes)."""
        caps = self.upstream.server_capabilities
        if caps is None:
            return True
        return bool(caps.prompts) if method.startswith("prompts/") else bool(caps.resources)

    async def listed(self, ctx: Ctx, method: str, key: str, *, max_pages: int) -> list[dict[str, Any]]:
        """Every item of one of the server's lists, page after page, for this endpoint's rules'
        caller (`Method not found` when the caller may call none of the server's tools)."""
        kind = _LISTS[method]
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(max_pages):
            answer = await self._paged(ctx, types.PaginatedRequestParams(cursor=cursor), kind)
            items.extend(item for item in answer.get(key, []) if isinstance(item, dict))
            cursor = answer.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        return items

    async def read_for(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> dict[str, Any]:
        return await self._read_resource(ctx, params)

    async def prompt_for(self, ctx: Ctx, params: types.GetPromptRequestParams) -> dict[str, Any]:
        return await self._get_prompt(ctx, params)

    async def watch_for(self, ctx: Ctx, uri: str) -> None:
        """The aggregated `/mcp` watches one of the server's resources for one of its callers: the
        server is told once however many watch (`Method not found` for a caller it is not for)."""
        self._admit(ctx)
        await self.watch.hold(uri)

    async def unwatch(self, uri: str) -> None:
        """One `/mcp` watcher of `uri` fewer (the last one tells the server)."""
        await self.watch.release(uri)

    # -- everything else goes to the server --------------------------------------------------------

    async def _list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return await self._paged(ctx, params, types.ListPromptsRequest)

    async def _list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return await self._paged(ctx, params, types.ListResourcesRequest)

    async def _list_templates(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return await self._paged(ctx, params, types.ListResourceTemplatesRequest)

    async def _get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> dict[str, Any]:
        def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            changed = params.model_copy(
                update={"input_responses": responses, "request_state": state, "meta": meta}
            )
            return types.GetPromptRequest(params=changed)

        return await self._forward(ctx, params, build)

    async def _read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> dict[str, Any]:
        def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            changed = params.model_copy(
                update={"input_responses": responses, "request_state": state, "meta": meta}
            )
            return types.ReadResourceRequest(params=changed)

        return await self._forward(ctx, params, build)

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> dict[str, Any]:
        def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            return types.CompleteRequest(params=params.model_copy(update={"meta": meta}))

        return await self._forward(ctx, params, build)

    async def _subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        """A handshake-era client's resource subscription; the server hears of the first one."""
        if self._follows_for_handshake_era():
            self._admit(ctx)
            if not self.announcer.subscribed(ctx.session, params.uri):
                self.announcer.subscribe(ctx.session, params.uri)
                await self.watch.hold(params.uri)
            return types.EmptyResult()
        first = self.announcer.subscribers(params.uri) == 0 and not self._watched_alike(params.uri)
        self.announcer.subscribe(ctx.session, params.uri)
        if first and self._upstream_subscribes():

            def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
                return types.SubscribeRequest(params=types.SubscribeRequestParams(uri=params.uri, _meta=meta))

            await self._forward(ctx, params, build)
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        if self._follows_for_handshake_era():
            if self.announcer.subscribed(ctx.session, params.uri):
                self.announcer.subscribe(ctx.session, params.uri, on=False)
                await self.watch.release(params.uri)
            return types.EmptyResult()
        self.announcer.subscribe(ctx.session, params.uri, on=False)
        last = self.announcer.subscribers(params.uri) == 0 and not self._watched_alike(params.uri)
        if last and self._upstream_subscribes():

            def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
                return types.UnsubscribeRequest(
                    params=types.UnsubscribeRequestParams(uri=params.uri, _meta=meta)
                )

            await self._forward(ctx, params, build)
        return types.EmptyResult()

    async def _listen(self, ctx: Ctx, params: types.SubscriptionsListenRequestParams) -> Any:
        """A 2026-07-28 client's event stream; the server is asked for the resource updates it names."""
        uris = params.notifications.resource_subscriptions or []
        try:
            self._admit(ctx)
        except MCPError:
            uris = []  # a caller who may read no resource of the server is told of no update
        async with self.watch.watching(uris):
            return await self._listener(ctx, params)

    def _session_ended(self, session_id: str) -> None:
        """An HTTP session ended: the announcer forgets it, and the resources it watched through the
        gateway's own listen on a server that speaks 2026-07-28 are released, so a session that went
        without `resources/unsubscribe` leaves no stream open on the server."""
        uris = self.announcer.forget(session_id)
        if not uris or not self._follows_for_handshake_era():
            return
        try:
            task = asyncio.get_running_loop().create_task(self.watch.release_all(uris))
        except RuntimeError:  # no loop: the gateway is stopping, and its streams with it
            return
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    def _one_session(self) -> bool:
        """Whether the callers of both eras talk to the same session of the server."""
        upstream = self.upstream  # the pool's rule (`for_caller`), without opening the twin
        return upstream.settings.transport != "http" or upstream.negotiated not in MODERN_PROTOCOL_VERSIONS

    def _follows_for_handshake_era(self) -> bool:
        """Whether handshake-era callers share a session with the server that speaks 2026-07-28 (stdio)."""
        return self._one_session() and self.upstream.negotiated in MODERN_PROTOCOL_VERSIONS

    def _subscribed_alike(self, uri: str) -> int:
        return self.announcer.subscribers(uri) if self._one_session() else 0

    def _watched_alike(self, uri: str) -> bool:
        return self._one_session() and self.watch.watchers(uri) > 0

    def _upstream_subscribes(self) -> bool:
        """Whether the session of handshake-era callers takes resource subscriptions."""
        upstream = self.pool.for_caller(self.name, handshake_era=True) or self.upstream
        caps = upstream.server_capabilities
        legacy = upstream.protocol_version not in MODERN_PROTOCOL_VERSIONS
        return legacy and caps is not None and caps.resources is not None and bool(caps.resources.subscribe)

    def _restored(self, connection: Connection, record: SessionRecord) -> None:
        """A session another replica opened is served here: its log level holds here too (its
        resource subscriptions are followed by the replica that took them)."""
        if record.log_level is not None:
            self._levels[connection] = cast(types.LoggingLevel, record.log_level)

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        """The level applies to this client's requests only: the server's session is shared."""
        self._levels[connection_of(ctx.session)] = params.level
        return types.EmptyResult()

    async def _paged(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None, kind: Any
    ) -> dict[str, Any]:
        cursor = params.cursor if params is not None else None

        def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            return kind(params=types.PaginatedRequestParams(cursor=cursor, _meta=meta))

        return await self._forward(ctx, params, build)

    async def _forward(self, ctx: Ctx, params: types.RequestParams | None, build: Build) -> dict[str, Any]:
        """One request to the server on the caller's behalf; its answer, or its error, as it was."""
        self._admit(ctx)
        relay = self._relay(ctx, params)
        upstream = self.pool.for_caller(self.name, handshake_era=relay.handshake_era) or self.upstream
        try:
            answer = await upstream.exchange(
                build, relay=relay, timeout_s=self.upstream.settings.call_timeout_s
            )
        except UpstreamDown as exc:  # held (misconfigured, unadmitted), stopped or restarting
            raise held_error(self.name, exc) from None
        except TimeoutError as exc:
            raise MCPError(types.REQUEST_TIMEOUT, str(exc), data={"code": "R-TIMEOUT-001"}) from None
        except ValidationError:
            message = f"server {self.name!r} answered with an invalid result"
            raise MCPError(types.INTERNAL_ERROR, message, data={"code": "D-DATA-MALFORMED"}) from None
        return as_served(answer)

    def _admit(self, ctx: Ctx) -> None:
        """Prompts and resources are for callers who may call at least one tool of the server."""
        allowed = self.authorizer.visible(self._principal(ctx))
        if allowed is None:
            return
        if not any(self._shows(allowed, tool.name) for tool in self.upstream.tools):
            raise MCPError(types.METHOD_NOT_FOUND, "Method not found")

    def _relay(self, ctx: Ctx, params: types.RequestParams | None) -> EndpointRelay:
        meta: dict[str, Any] = dict(params.meta or {}) if params is not None else {}
        caps = ctx.session.client_capabilities
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            level = meta.get(types.LOG_LEVEL_META_KEY)
            log_level = level if level in _LEVELS else None
        elif ctx.session.can_send_request:
            log_level = self._levels.get(connection_of(ctx.session), "debug")
        else:  # a handshake-era request answered with one JSON body: it carries the answer only
            log_level = None
        state: str | None = getattr(params, "request_state", None)
        continues: str | None = None
        if (approved := open_state(state)) is not None:  # answering an approved call's question
            continues, state = approved
        return EndpointRelay(
            ctx,
            log_level=log_level,
            client_capabilities=caps.model_dump(by_alias=True, mode="json", exclude_none=True)
            if caps
            else {},
            wants_progress=not PROGRESS_KEYS.isdisjoint(meta),
            meta={key: value for key, value in meta.items() if _passable(key)},
            input_responses=getattr(params, "input_responses", None),
            request_state=state,
            continues=continues,
        )

    def _principal(self, ctx: Ctx) -> Principal:
        return principal_of(ctx, self.principal)


_UNKNOWN_TOOL = "I-REQ-UNKNOWN-TOOL"
_LISTS: dict[str, Any] = {
    "resources/list": types.ListResourcesRequest,
    "resources/templates/list": types.ListResourceTemplatesRequest,
    "prompts/list": types.ListPromptsRequest,
}


def _passable(key: str) -> bool:
    """A `_meta` key of the caller's that goes on to the server (not a protocol or gateway key)."""
    return key not in _RESERVED_META and not key.startswith("colonnade/")


def _rendered(result: CallResult, *, legacy: bool) -> Any:
    """The server's own answer (or JSON-RPC error) when the gateway let it stand, else a typed result."""
    answer = answer_of(result.handover.answer)
    if answer.error is not None and not result.ok and answer.error.error.code not in _LOCAL_ERRORS:
        raise answer.error
    code = result.error.code if result.error is not None else None
    raw = answer.result
    asks = raw is not None and is_input_required(raw)
    if raw is not None and asks and code == INPUT_REQUIRED and not legacy:
        continuation = result.handover.continuation
        if continuation is not None:  # an approved call's question: its answer continues the call
            raw = {**raw, "requestState": seal_state(continuation, raw.get("requestState"))}
        return as_served(raw)
    if raw is None and (replayed := proxied_replay(result)) is not None:
        return replayed
    return render_answer(result, raw, legacy=legacy)
