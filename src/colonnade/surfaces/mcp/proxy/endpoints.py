"""`/servers/{name}/mcp`: every downstream server's own endpoint, behind the gateway's HTTP edge.

Servers come and go while the gateway runs, so one ASGI route serves them all: it looks the server
up by name on each request, builds its `UpstreamEndpoint` on first use and hosts that endpoint's
SDK session manager in a task of its own for as long as the app runs (`running()`, entered by the
app's lifespan). A name with no server is answered 404; a server removed and added again gets a
fresh endpoint (its old sessions end). The edge hands these paths on without the router
(`direct_match`), as it does `/mcp`: the route is the only one of its shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable

from mcp.server.subscriptions import ServerEvent
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from colonnade.surfaces.mcp.proxy.endpoint import UpstreamEndpoint
from colonnade.surfaces.mcp.proxy.served_upstream import ServedUpstream

__all__ = ["SERVERS_PREFIX", "UpstreamEndpoints"]

SERVERS_PREFIX = "/servers"
_PATH_START = SERVERS_PREFIX + "/"
_PATH_END = "/mcp"

Lookup = Callable[[str], ServedUpstream | None]
Factory = Callable[[ServedUpstream], UpstreamEndpoint]


class _Hosted:
    """An endpoint and the task that keeps its session manager running."""

    def __init__(self, endpoint: UpstreamEndpoint) -> None:
        self.endpoint = endpoint
        self.ready = asyncio.Event()
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self._host(), name=f"colonnade-endpoint-{endpoint.name}")

    async def _host(self) -> None:
        async with self.endpoint.manager.run():
            self.ready.set()
            await self.stop.wait()

    async def close(self) -> None:
        self.stop.set()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task


class UpstreamEndpoints:
    def __init__(self, lookup: Lookup, factory: Factory) -> None:
        self.lookup = lookup
        self.factory = factory
        self._hosted: dict[str, _Hosted] = {}
        self._lock = asyncio.Lock()
        self._running = False

    def routes(self) -> list[BaseRoute]:
        return [Route(SERVERS_PREFIX + "/{name}/mcp", self)]

    def direct_match(self, path: str) -> ASGIApp | None:
        """The app serving `path` if it is `/servers/{name}/mcp` (a name as the route reads it: one
        segment, not empty), else None."""
        if not path.startswith(_PATH_START) or not path.endswith(_PATH_END):
            return None
        name = path[len(_PATH_START) : -len(_PATH_END)]
        if not name or "/" in name:
            return None
        return functools.partial(self.serve, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.serve(str(scope.get("path_params", {}).get("name", "")), scope, receive, send)

    async def serve(self, name: str, scope: Scope, receive: Receive, send: Send) -> None:
        """One request to the endpoint of the server called `name`."""
        upstream = self.lookup(name)
        if upstream is None or not self._running:
            response = PlainTextResponse(f"No MCP server named {name!r} is served here\n", status_code=404)
            await response(scope, receive, send)
            return
        endpoint = await self._endpoint(upstream)
        await endpoint.manager.asgi_app(scope, receive, send)

    async def endpoint(self, name: str) -> UpstreamEndpoint | None:
        """The running endpoint of server `name` (built on first use), for the aggregated `/mcp`'s
        resources and prompts; None when there is no such server or the endpoints are not running."""
        upstream = self.lookup(name)
        if upstream is None or not self._running:
            return None
        return await self._endpoint(upstream)

    async def announce(self, name: str, event: ServerEvent) -> None:
        """Tell the clients of one server's endpoint about a change of that server's lists."""
        hosted = self._hosted.get(name)
        if hosted is not None and hosted.ready.is_set():
            await hosted.endpoint.announce(event)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self._running = True
        try:
            yield
        finally:
            self._running = False
            hosted, self._hosted = list(self._hosted.values()), {}
            await asyncio.gather(*(entry.close() for entry in hosted))

    async def _endpoint(self, upstream: ServedUpstream) -> UpstreamEndpoint:
        hosted = self._hosted.get(upstream.name)
        if hosted is None or hosted.endpoint.upstream is not upstream:
            async with self._lock:
                hosted = self._hosted.get(upstream.name)
                if hosted is None or hosted.endpoint.upstream is not upstream:
                    if hosted is not None:
                        await hosted.close()
                    hosted = _Hosted(self.factory(upstream))
                    self._hosted[upstream.name] = hosted
        await hosted.ready.wait()
        return hosted.endpoint
