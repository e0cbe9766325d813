"""`/servers/{name}/mcp`: every downstream server's own endpoint, behind the gateway's HTTP edge.

Servers come and go while the gateway runs, so one ASGI route serves them all: it looks the server
up by name on each request, builds its `UpstreamEndpoint` on first use and hosts that endpoint's
SDK session manager in a task of its own for as long as the app runs (`running()`, entered by the
app's lifespan). A name with no server is answered 404; a server removed and added again gets a
fresh endpoint (its old sessions end).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from mcp.server.subscriptions import ServerEvent
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from colonnade.adapters.mcp_upstream import Upstream
from colonnade.surfaces.mcp.upstream_endpoint import UpstreamEndpoint

__all__ = ["SERVERS_PREFIX", "UpstreamEndpoints"]

SERVERS_PREFIX = "/servers"

Lookup = Callable[[str], Upstream | None]
Factory = Callable[[Upstream], UpstreamEndpoint]


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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = str(scope.get("path_params", {}).get("name", ""))
        upstream = self.lookup(name)
        if upstream is None or not self._running:
            response = PlainTextResponse(f"No MCP server named {name!r} is served here\n", status_code=404)
            await response(scope, receive, send)
            return
        endpoint = await self._endpoint(upstream)
        await endpoint.manager.asgi_app(scope, receive, send)

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

    async def _endpoint(self, upstream: Upstream) -> UpstreamEndpoint:
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
