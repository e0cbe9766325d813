"""Resource subscriptions of a server's own endpoint's callers, relayed from the server.

A 2026-07-28 client asks for a resource's updates on its `subscriptions/listen` stream
(`resourceSubscriptions`); the endpoint's `ListenHandler` delivers the updates the gateway
announces. `ResourceWatch` makes the server send them: while at least one caller's stream watches a
resource, the server's own session (the one 2026-07-28 callers talk to) is subscribed to it once,
with a `subscriptions/listen` of its own when that session speaks 2026-07-28, with
`resources/subscribe` when it speaks the handshake era and offers subscriptions (shared with the
handshake-era callers' subscriptions when they go to the same session). The handshake-era callers'
own `resources/subscribe` hold a watch too when their session is that one and speaks 2026-07-28 (a
stdio server: it has no handshake-era twin). The updates come back as the server's list changes do
(`Upstream.on_event`) and are announced to the endpoint's clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from colonnade.mcp_relay.answer import UpstreamDown
from colonnade.mcp_relay.relay import Relay
from colonnade.surfaces.mcp.proxy.served_upstream import ServedUpstream

__all__ = ["ResourceWatch"]

logger = logging.getLogger(__name__)
_RELEASE_S = 5.0
"""How long telling the server a resource is no longer watched may take (the caller has gone)."""


class ResourceWatch:
    """The resources callers of one server's endpoint watch on its own session; the server told once."""

    def __init__(self, upstream: ServedUpstream, *, shared: Callable[[str], int]) -> None:
        """`shared(uri)`: the handshake-era callers subscribed to `uri` through this same session."""
        self.upstream = upstream
        self.shared = shared
        self._watchers: dict[str, int] = {}
        self._following: dict[str, asyncio.Task[None]] = {}

    def watchers(self, uri: str) -> int:
        return self._watchers.get(uri, 0)

    @contextlib.asynccontextmanager
    async def watching(self, uris: Sequence[str]) -> AsyncIterator[None]:
        """For the duration of one caller's listen stream."""
        held: list[str] = []
        try:
            for uri in dict.fromkeys(uris):
                held.append(uri)
                await self.hold(uri)
            yield
        finally:
            with anyio.move_on_after(_RELEASE_S, shield=True):
                for uri in held:
                    await self.release(uri)

    async def release_all(self, uris: Sequence[str] | frozenset[str]) -> None:
        """A watcher of each of `uris` fewer, in one go (a caller went without unsubscribing)."""
        with anyio.move_on_after(_RELEASE_S, shield=True):
            for uri in uris:
                await self.release(uri)

    async def hold(self, uri: str) -> None:
        """One more watcher of `uri` (the first one tells the server)."""
        self._watchers[uri] = self.watchers(uri) + 1
        if self._watchers[uri] == 1:
            await self._tell(uri, on=True)

    async def release(self, uri: str) -> None:
        """One watcher of `uri` fewer (the last one tells the server)."""
        if self.watchers(uri) == 0:
            return
        self._watchers[uri] -= 1
        if self._watchers[uri] == 0:
            del self._watchers[uri]
            await self._tell(uri, on=False)

    async def _tell(self, uri: str, *, on: bool) -> None:
        upstream = self.upstream
        if upstream.negotiated in MODERN_PROTOCOL_VERSIONS or uri in self._following:
            if on:
                name = f"colonnade-mcp-{upstream.name}-resource"
                self._following[uri] = asyncio.create_task(upstream.follow_resource(uri), name=name)
            elif (task := self._following.pop(uri, None)) is not None:
                task.cancel()
            return
        caps = upstream.server_capabilities
        if caps is None or caps.resources is None or not caps.resources.subscribe or self.shared(uri):
            return  # nothing to subscribe to, or the handshake-era callers' subscription already serves

        def build(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            if on:
                return types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri, _meta=meta))
            return types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri, _meta=meta))

        try:
            await upstream.exchange(build, relay=Relay(), timeout_s=upstream.settings.call_timeout_s)
        except (UpstreamDown, MCPError, TimeoutError, ValidationError) as exc:
            logger.debug("server %r: (un)subscribing %s failed: %s", upstream.name, uri, exc)
