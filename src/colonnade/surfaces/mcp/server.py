"""The MCP surface: the catalog as MCP tools, calls through the pipeline, list-change announcements.

Built on the SDK's low-level `Server`, which serves both protocol eras: 2026-07-28 clients learn
about list changes over `subscriptions/listen`; handshake-era clients get
`notifications/tools/list_changed` on the sessions this surface has seen. Every tools/call, the
gateway's own tools included (search, describe, commit), is one `CallService.call` with the
caller's principal; with routing, opted-in clients get routed lists (`routing.py`). Every
listing shows only what the gateway's authorizer lets the caller see.
"""

from __future__ import annotations

import functools
import logging
import warnings
import weakref
from typing import Any, cast

import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colonnade import __version__
from colonnade.calls.approvals import ApprovalDesk
from colonnade.calls.commit_tool import TWO_PHASE_TOOLS
from colonnade.calls.envelope import (
    CallResult,
)
from colonnade.calls.service import CallService
from colonnade.catalog.bindings import McpBinding
from colonnade.catalog.builtins import BuiltinTools, open_to_every_caller
from colonnade.catalog.catalog import Catalog, CatalogChange
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import AllowAll, Authorizer, permits, tool_filter
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal
from colonnade.mcp_relay.answer import answer_of
from colonnade.mcp_relay.relay import Channel, Relay
from colonnade.observability.tracing import mcp_call_attributes
from colonnade.platform.changes import ResourceChanges
from colonnade.surfaces.edge import current_caller
from colonnade.surfaces.envelope_parsing import EnvelopeRejection
from colonnade.surfaces.mcp.announcer import Announcer, connection_of
from colonnade.surfaces.mcp.call_envelope import call_request
from colonnade.surfaces.mcp.caller import principal_of
from colonnade.surfaces.mcp.client_relay import CallerRelay
from colonnade.surfaces.mcp.commit import CommitListing
from colonnade.surfaces.mcp.confirmation import (
    ApprovalConfirmation,
    answers_confirmation,
    wants_confirmation,
)
from colonnade.surfaces.mcp.platform_resources import PlatformResources
from colonnade.surfaces.mcp.proxy.aggregate import AggregateResources
from colonnade.surfaces.mcp.render import (
    MCP_ENVELOPE_VERSION,
    model_defaults,
    proxied_replay,
    render_answer,
    result_body,
)
from colonnade.surfaces.mcp.resource_handlers import ResourceHandlers
from colonnade.surfaces.mcp.routing import DynamicToolList, RoutingMetaError, RoutingRequest
from colonnade.surfaces.mcp.sdk_spans import drop_idle_sdk_spans
from colonnade.surfaces.mcp.session_records import SessionRecord
from colonnade.surfaces.mcp.version_pins import VersionPins, VersionPinsError

__all__ = ["DEFAULT_PAGE_SIZE", "McpSurface"]

logger = logging.getLogger(__name__)
DEFAULT_PAGE_SIZE = 200
_INSTRUCTIONS = (
    "Colonnade exposes governed API operations as tools. Destructive or approval-gated tools are "
    "never executed without a human's approval; every error carries a stable code and a fix hint."
)


class _GatewayServer(Server[Any]):
    """Advertises `tools.listChanged` to handshake-era clients on every transport (HTTP included)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class McpSurface:
    """Translates MCP requests into catalog reads and CallRequests; holds no governance."""

    def __init__(
        self,
        catalog: Catalog,
        calls: CallService,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        builtins: BuiltinTools | None = None,
        routing: DynamicToolList | None = None,
        principal: Principal = ANONYMOUS_LOOPBACK,
        authorizer: Authorizer | None = None,
        approvals: ApprovalDesk | None = None,
        sdk_spans: bool = True,
        platform: ResourceChanges | None = None,
        servers: AggregateResources | None = None,
    ) -> None:
        """`sdk_spans=False` (the gateway records no spans) drops the SDK's span per request when no
        global tracer provider is installed either: that span would record nothing, and its only
        effect, a client's `_meta` traceparent as the current context, matters only to a recording
        tracer. It costs about 14 us per request. `platform` (the gateway serves its platform tools)
        adds the `colonnade://` resources and the prompts, with the changes that update them; `servers`
        adds the downstream servers' resources, templates and prompts."""
        self.catalog = catalog
        self.confirmation = ApprovalConfirmation(approvals) if approvals is not None else None
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()
        self.calls = calls
        self.page_size = page_size
        self.builtins = builtins if builtins is not None else BuiltinTools()
        self.routing = routing
        self.principal = principal
        self.commit = CommitListing(catalog)
        self.announcer = Announcer()
        self.bus = self.announcer.bus
        self.platform = (
            PlatformResources(calls, self.authorizer, principal, self.announcer, platform)
            if platform is not None
            else None
        )
        resources = self.resources = ResourceHandlers(self.platform, servers, self.announcer)
        self._levels: weakref.WeakKeyDictionary[object, types.LoggingLevel] = weakref.WeakKeyDictionary()
        # `logging/setLevel` is the handshake era's opt-in to log messages (deprecated in 2026-07-28, where
        # `_meta` carries the level); the SDK warns about the handler each time a server is built.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = _GatewayServer(
                "colonnade",
                version=__version__,
                title="Colonnade gateway",
                instructions=_INSTRUCTIONS,
                get_tool_input_schema=self._input_schema,
                on_list_tools=self._list_tools,
                # The runner serialises any mapping a handler returns (`HandlerResult`); the typed hook
                # names only the models.
                on_call_tool=cast(Any, self._call_tool),
                on_subscriptions_listen=resources.listen(ListenHandler(self.bus)),
                on_set_logging_level=self._set_level,
                **resources.handlers(),
            )
        drop_idle_sdk_spans(self.server, sdk_spans=sdk_spans)
        self.server.middleware.append(self.announcer.remember)
        # `serverInfo` for 2026-07-28 results, made once: the SDK deep-copies its dump per response
        # otherwise, and its serialisation copies this one into each response anyway.
        self._server_info = self.server.server_info_stamp
        catalog.subscribe(self._on_catalog_change)

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """For the SDK's Mcp-Param header check: a catalog lookup, not a full tools/list; a tool the
        caller may not see has no schema here either, so the check cannot tell that it exists. A bare
        tool name counts when it names exactly one tool; the pipeline decides the rest."""
        tool = self.builtins.get(name)
        if tool is None or not open_to_every_caller(tool):
            tool = tool or self.catalog.get(name)
            if tool is None and len(bearers := self.catalog.aliased(name)) == 1:
                tool = bearers[0]
            caller = current_caller() or self.principal
            if tool is not None and not permits(self.authorizer.visible(caller), tool.canonical_name):
                return None
        return tool.input_schema if tool is not None else None

    def _meta_tools(self, principal: Principal) -> list[types.Tool]:
        """The gateway's own tools on the first page: discovery always, commit and discard while two-phase
        tools exist, and the platform's tools the caller's persona may see."""
        allowed = self.authorizer.visible(principal)
        return [
            tool.to_mcp()
            for tool in self.builtins
            if (tool.canonical_name not in TWO_PHASE_TOOLS or self.commit.listed())
            and (open_to_every_caller(tool) or permits(allowed, tool.canonical_name))
        ]

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        principal = principal_of(ctx, self.principal)
        meta_tools = self._meta_tools(principal) if cursor is None else []
        if self.routing is not None and cursor is None:
            routed = await self.routing.listing(
                ctx, _routing_request(params.meta if params is not None else None)
            )
            if routed is not None:
                return types.ListToolsResult(tools=[*(tool.to_mcp() for tool in routed), *meta_tools])
        include = tool_filter(self.authorizer.listed(principal))
        pins = _version_pins(params.meta if params is not None else None)
        pinned: list[Tool] = []
        if pins is not None:
            if cursor is None:  # the pinned versions' tools open the listing, as the meta tools do
                pinned = [tool for tool in pins.tools(self.catalog) if include is None or include(tool)]
            include = pins.listing_filter(include)
        try:
            tools, next_cursor = self.catalog.page(cursor, self.page_size, include)
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, f"invalid cursor: {exc}") from None
        listed = [*meta_tools, *(tool.to_mcp() for tool in (*pinned, *tools))]
        return types.ListToolsResult(tools=listed, next_cursor=next_cursor)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        """Our own results go back in their wire form (`result_body`); the SDK checks them against
        the tools/call result of the client's protocol version as it serialises them."""
        meta = dict(params.meta or {})
        builtin = params.name in self.builtins
        routing = _routing_request(meta) if self.routing is not None and not builtin else None
        headers = getattr(ctx.request, "headers", None)  # the HTTP request's; none over stdio
        request = call_request(params.name, dict(params.arguments or {}), meta, headers)
        if isinstance(request, EnvelopeRejection):
            return result_body(request.result())
        principal = principal_of(ctx, self.principal)
        if self.confirmation is not None and answers_confirmation(params):
            called = self.catalog.get(params.name)
            canonical = called.canonical_name if called is not None else None
            answered = await self.confirmation.answered(params, request, principal, canonical)
            return result_body(answered, version=request.envelope_version or MCP_ENVELOPE_VERSION)
        # The caller's channel, a relay built only if a downstream server is called (or an approval
        # gate asks which round this request answers).
        channel = None if builtin else Channel(functools.partial(self._caller_relay, ctx, params))
        session_id = headers.get("mcp-session-id") if headers is not None else None
        spanned = mcp_call_attributes(
            request_id=ctx.request_id, session_id=session_id, protocol_version=ctx.protocol_version
        )
        with spanned:
            result = await self.calls.call(request, principal, channel=channel, session_id=session_id)
        version = request.envelope_version or MCP_ENVELOPE_VERSION
        if self.confirmation is not None and wants_confirmation(result):
            confirmed = await self.confirmation.ask(ctx, result, principal)
            if isinstance(confirmed, types.InputRequiredResult):
                return confirmed
            return result_body(confirmed, version=version)
        if (
            self.routing is not None
            and not builtin
            and await self.routing.after_call(ctx, routing, self._called(result), result.ok)
        ):
            await self._announce_to(ctx)
        if request.dry_run:
            return result_body(result, dry_run=True, version=version)
        raw = answer_of(result.handover.answer).result  # a downstream MCP server's own, when one answered
        if raw is None:
            replayed = proxied_replay(result, version) if _proxied(result) else None
            return self._stamped(
                ctx, replayed if replayed is not None else result_body(result, version=version)
            )
        if channel is not None and (asked := _caller(channel).input_round(result)) is not None:
            return asked
        legacy = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        rendered = render_answer(result, raw, legacy=legacy, version=version)
        if isinstance(rendered, types.CallToolResult):
            return rendered
        # The server's answer as a dict: the adapter checked it (`outcomes.py`), and the SDK's
        # runner validates it for the caller's version as it serialises it; a model built here
        # would be dumped again for the same bytes (about 15 us), and its `serverInfo` deep-copied.
        return self._stamped(ctx, model_defaults(rendered))

    async def _set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """A handshake-era caller's opt-in to the log messages of the proxied tools it calls (its own
        connection only; the gateway writes none of its own)."""
        self._levels[connection_of(ctx.session)] = params.level
        return types.EmptyResult()

    def session_ended(self, session_id: str) -> None:
        """A handshake-era session is gone: what it subscribed to is dropped, downstream watches too."""
        self.resources.session_ended(session_id)

    def restore_session(self, connection: Connection, record: SessionRecord) -> None:
        """A handshake-era session opened on another replica is served here from now on: its
        connection gets back the log level the session set there."""
        if record.log_level is not None:
            self._levels[connection] = cast(types.LoggingLevel, record.log_level)

    def _stamped(self, ctx: ServerRequestContext[Any, Any], body: dict[str, Any]) -> dict[str, Any]:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            body["_meta"][types.SERVER_INFO_META_KEY] = self._server_info
        return body

    def _called(self, result: CallResult) -> Tool | None:
        """The catalog tool a call resolved to (its name may have been an alias), if it resolved."""
        return result.handover.tool

    def _caller_relay(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> Relay:
        level = self._levels.get(connection_of(ctx.session)) if ctx.session is not None else None
        return CallerRelay.of(ctx, params, level=level)

    async def _on_catalog_change(self, change: CatalogChange) -> None:
        await self.announce_tools_changed()

    async def announce_tools_changed(self) -> None:
        """Tell every listening client that the tool list changed, in both protocol eras."""
        await self.announcer.announce(ToolsListChanged())

    async def _announce_to(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """A routed list moved for one client: tell its session, or the listeners of the modern era."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session is None:
            await self.bus.publish(ToolsListChanged())
            return
        try:
            await ctx.session.send_tool_list_changed()
        except Exception as exc:  # the client went away; its next request starts afresh
            logger.debug("cannot announce a routed list change: %s", exc)


def _proxied(result: CallResult) -> bool:
    """Whether the call resolved to a downstream MCP server's tool."""
    tool = result.handover.tool
    return tool is not None and isinstance(tool.binding, McpBinding)


def _caller(channel: Channel) -> CallerRelay:
    relay = channel.relay
    assert isinstance(relay, CallerRelay), "this surface's channels build its callers' relays"
    return relay


def _version_pins(meta: Any) -> VersionPins | None:
    try:
        return VersionPins.from_meta(meta)
    except VersionPinsError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc)) from None


def _routing_request(meta: Any) -> RoutingRequest | None:
    try:
        return RoutingRequest.from_meta(meta)
    except RoutingMetaError as exc:
        raise MCPError(types.INVALID_PARAMS, str(exc)) from None
