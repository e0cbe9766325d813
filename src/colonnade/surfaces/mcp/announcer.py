"""Telling an MCP endpoint's clients that a list changed, in both protocol eras.

2026-07-28 clients learn it over `subscriptions/listen` (the announcer's bus feeds the SDK's
`ListenHandler`); handshake-era clients get a `notifications/*/list_changed` on the connections the
endpoint has seen, which its `remember` middleware records. A resource update goes to the
handshake-era connections that subscribed to that resource. A remembered session holds its
connection, so the weak keys alone never let go of one: the session manager calls `forget` when
a session ends (closed, expired or evicted).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["Announcer", "connection_of"]

logger = logging.getLogger(__name__)


def connection_of(session: ServerSession) -> object:
    """The connection a per-request session speaks for (the SDK keeps it private)."""
    return getattr(session, "_connection", session)


class Announcer:
    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        # Sessions are per request; the connection behind them lives as long as the client does.
        self._legacy: weakref.WeakKeyDictionary[object, ServerSession] = weakref.WeakKeyDictionary()
        self._subscribed: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()
        self._by_session_id: dict[str, object] = {}

    async def remember(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: note each handshake-era connection, to reach it later."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and ctx.session is not None:
            connection = connection_of(ctx.session)
            self._legacy[connection] = ctx.session
            session_id = getattr(connection, "session_id", None)
            if isinstance(session_id, str):
                self._by_session_id[session_id] = connection
        return await call_next(ctx)

    @property
    def remembered(self) -> int:
        """Handshake-era connections this announcer would notify."""
        return len(self._legacy)

    def connection(self, session_id: str) -> object | None:
        """The handshake-era connection behind an HTTP session id, while it is remembered."""
        return self._by_session_id.get(session_id)

    def forget(self, session_id: str) -> frozenset[str]:
        """An HTTP session ended: stop holding its connection; the resources it had subscribed to."""
        connection = self._by_session_id.pop(session_id, None)
        if connection is None:
            return frozenset()
        self._legacy.pop(connection, None)
        return frozenset(self._subscribed.pop(connection, ()))

    def subscribe(self, session: ServerSession, uri: str, *, on: bool = True) -> None:
        """A handshake-era connection (un)subscribes to updates of one resource."""
        uris = self._subscribed.setdefault(connection_of(session), set())
        if on:
            uris.add(uri)
        else:
            uris.discard(uri)

    def subscribed(self, session: ServerSession, uri: str) -> bool:
        return uri in self._subscribed.get(connection_of(session), ())

    def subscribers(self, uri: str) -> int:
        return sum(1 for uris in self._subscribed.values() if uri in uris)

    async def announce(self, event: ServerEvent) -> None:
        """Publish to listening 2026-07-28 clients and notify the handshake-era connections."""
        await self.bus.publish(event)
        for connection, session in list(self._legacy.items()):
            send = self._legacy_sender(connection, session, event)
            if send is None:
                continue
            try:
                await send()
            except Exception as exc:  # a closed connection must not stop the others from hearing
                logger.debug("dropping a closed MCP connection: %s", exc)
                self._legacy.pop(connection, None)

    def _legacy_sender(
        self, connection: object, session: ServerSession, event: ServerEvent
    ) -> Callable[[], Awaitable[None]] | None:
        if isinstance(event, ToolsListChanged):
            return session.send_tool_list_changed
        if isinstance(event, PromptsListChanged):
            return session.send_prompt_list_changed
        if isinstance(event, ResourcesListChanged):
            return session.send_resource_list_changed
        if isinstance(event, ResourceUpdated) and event.uri in self._subscribed.get(connection, set()):
            uri = event.uri

            async def updated() -> None:
                await session.send_resource_updated(uri)

            return updated
        return None
