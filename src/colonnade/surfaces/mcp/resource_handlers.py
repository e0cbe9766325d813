"""`resources/*` and `prompts/*` on `/mcp`: the platform's own and the downstream servers', merged.

Either part may be absent: the platform's `colonnade://` resources and prompts are served when the
gateway serves its platform tools (`platform_resources.py`), the servers' when it has downstream
servers (`proxy/aggregate.py`). A `colonnade://` URI and a platform prompt's name always mean the
platform's; everything else is asked of the servers. A subscription to a downstream resource (or a
2026-07-28 listen stream naming one) is a watch on its server (`AggregateResources.watch`), held
until the caller unsubscribes, its stream ends or its connection is gone; the server's updates are
announced on `/mcp` like the platform's.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from colonnade.platform.prompts import PLATFORM_PROMPTS
from colonnade.platform.resources import match_resource
from colonnade.surfaces.mcp.announcer import Announcer, connection_of
from colonnade.surfaces.mcp.platform_resources import PlatformResources
from colonnade.surfaces.mcp.proxy.aggregate import AggregateResources

__all__ = ["ResourceHandlers"]

Ctx = ServerRequestContext[Any, Any]
Listen = Callable[[Ctx, types.SubscriptionsListenRequestParams], Awaitable[Any]]
_PLATFORM_PROMPTS = frozenset(p.name for p in PLATFORM_PROMPTS)


class ResourceHandlers:
    def __init__(
        self, platform: PlatformResources | None, servers: AggregateResources | None, announcer: Announcer
    ) -> None:
        self.platform = platform
        self.servers = servers
        self.announcer = announcer
        if servers is not None:
            servers.on_update = announcer.announce
        self._held: weakref.WeakKeyDictionary[object, dict[str, str]] = weakref.WeakKeyDictionary()
        """Handshake-era connection -> downstream URI it subscribed to -> the server watching it."""
        self._releasing: set[asyncio.Task[None]] = set()

    def handlers(self) -> dict[str, Any]:
        """The low-level `Server`'s handler arguments (none when neither part is served)."""
        if self.platform is None and self.servers is None:
            return {}
        return {
            "on_list_resources": self.list_resources,
            "on_list_resource_templates": self.list_templates,
            "on_read_resource": self.read,
            "on_subscribe_resource": self.subscribe,
            "on_unsubscribe_resource": self.unsubscribe,
            "on_list_prompts": self.list_prompts,
            "on_get_prompt": self.get_prompt,
        }

    def listen(self, listener: Listen) -> Listen:
        """The 2026-07-28 listen handler, holding watches on the downstream URIs a stream names."""
        servers = self.servers
        if servers is None:
            return listener

        async def handle(ctx: Ctx, params: types.SubscriptionsListenRequestParams) -> Any:
            named = params.notifications.resource_subscriptions or []
            downstream = [uri for uri in named if not self._is_platforms(uri)]
            async with servers.watching(ctx, downstream):
                return await listener(ctx, params)

        return handle

    def _is_platforms(self, uri: str) -> bool:
        return self.platform is not None and (self.servers is None or _is_platform_uri(uri))

    async def list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed = list((await self.platform.list_resources(ctx, params)).resources) if self.platform else []
        if self.servers is not None:
            listed.extend(await self.servers.resources(ctx))
        return types.ListResourcesResult(resources=listed)

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listed = (
            list((await self.platform.list_templates(ctx, params)).resource_templates)
            if self.platform
            else []
        )
        if self.servers is not None:
            listed.extend(await self.servers.templates(ctx))
        return types.ListResourceTemplatesResult(resource_templates=listed)

    async def read(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | dict[str, Any]:
        if self.platform is not None and (self.servers is None or _is_platform_uri(str(params.uri))):
            return await self.platform.read(ctx, params)
        assert self.servers is not None
        return await self.servers.read(ctx, params)

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        if self._is_platforms(uri) or self.servers is None:
            if self.platform is None:
                raise MCPError(types.INVALID_PARAMS, f"no resource {uri}")
            return await self.platform.subscribe(ctx, params)
        if ctx.session is None:
            return types.EmptyResult()
        connection = connection_of(ctx.session)
        held = self._held.get(connection)
        if held is None:
            held = self._held[connection] = {}
            weakref.finalize(connection, self._release_later, asyncio.get_running_loop(), held)
        if uri not in held:
            held[uri] = await self.servers.watch(ctx, uri)
        self.announcer.subscribe(ctx.session, uri)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        if ctx.session is not None:
            server = self._held.get(connection_of(ctx.session), {}).pop(uri, None)
            if server is not None and self.servers is not None:
                await self.servers.unwatch(uri, server)
            self.announcer.subscribe(ctx.session, uri, on=False)
        return types.EmptyResult()

    def session_ended(self, session_id: str) -> None:
        """A handshake-era session ended (its client's DELETE, idle, evicted): its watches are released."""
        connection = self.announcer.connection(session_id)
        self.announcer.forget(session_id)
        held = self._held.pop(connection, None) if connection is not None else None
        if held:
            self._release(dict(held))
            held.clear()  # the connection's finalizer finds nothing left to release

    def _release_later(self, loop: asyncio.AbstractEventLoop, held: dict[str, str]) -> None:
        """A connection went without its session's end being heard (stdio): its watches are released."""
        if held and not loop.is_closed():
            loop.call_soon_threadsafe(self._release, dict(held))
            held.clear()

    def _release(self, held: dict[str, str]) -> None:
        async def release() -> None:
            for uri, server in held.items():
                if self.servers is not None:
                    with contextlib.suppress(Exception):
                        await self.servers.unwatch(uri, server)

        task = asyncio.get_running_loop().create_task(release())
        self._releasing.add(task)
        task.add_done_callback(self._releasing.discard)

    async def list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        listed = list((await self.platform.list_prompts(ctx, params)).prompts) if self.platform else []
        if self.servers is not None:
            listed.extend(await self.servers.prompts(ctx))
        return types.ListPromptsResult(prompts=listed)

    async def get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | dict[str, Any]:
        if self.platform is not None and (self.servers is None or params.name in _PLATFORM_PROMPTS):
            return await self.platform.get_prompt(ctx, params)
        answer = await self.servers.get_prompt(ctx, params) if self.servers is not None else None
        if answer is None:
            raise MCPError(types.INVALID_PARAMS, f"no prompt named {params.name!r} (prompts/list)")
        return answer


def _is_platform_uri(uri: str) -> bool:
    return match_resource(uri) is not None or uri.startswith("colonnade://")
