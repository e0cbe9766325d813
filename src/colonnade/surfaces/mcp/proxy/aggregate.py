"""Downstream servers' resources, resource templates and prompts on the aggregated `/mcp`.

Each server's own endpoint (`/servers/{name}/mcp`) already forwards these on its callers' behalf
with the gateway's rules: a caller who may call none of a server's tools gets "Method not found"
there, and nothing from it here. This part asks every server's endpoint in turn and merges the
answers. Prompts are namespaced like tools (the wire name of `{tenant}:{server}:{prompt}`); a
resource keeps its URI, since tool results link to it, and carries its server in `_meta` (with its
name namespaced). A read goes to the server that listed the URI (or whose template's fixed part
begins it); when two servers list the same URI, the first server in configuration order serves it.
A subscription (handshake era) or a listen stream naming a downstream URI (2026-07-28) is a watch
held on that server's endpoint (`UpstreamEndpoint.watch_for`, which tells the server once however
many watch); the server's updates of a URI it serves come back through `server_event` and are
announced on `/mcp` (`on_update`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent
from mcp_types.methods import is_input_required
from pydantic import BaseModel

from colonnade.catalog.naming import WireProfile, join_canonical, to_wire
from colonnade.surfaces.mcp.proxy.endpoint import UpstreamEndpoint

__all__ = ["SERVER_META_KEY", "AggregateResources"]

SERVER_META_KEY = "colonnade/server"
"""`_meta` key naming the downstream server of a listed resource, template or prompt."""

_MAX_PAGES = 50
"""Pages read of one server's list per listing: a server that pages forever cannot hold `/mcp`."""

logger = logging.getLogger("colonnade.servers")

Ctx = ServerRequestContext[Any, Any]
EndpointOf = Callable[[str], Awaitable[UpstreamEndpoint | None]]
_Result = TypeVar("_Result", bound=BaseModel)


class AggregateResources:
    def __init__(
        self, names: Callable[[], Iterable[str]], endpoint_of: EndpointOf, profile: WireProfile
    ) -> None:
        """`names` are the configured servers in order; `endpoint_of(name)` is its running endpoint."""
        self.names = names
        self.endpoint_of = endpoint_of
        self.profile = profile
        self._uris: dict[str, str] = {}
        """Resource URI -> the server that listed it (the latest listing of each server)."""
        self._templates: list[tuple[str, str]] = []
        """(the fixed start of a URI template, its server)."""
        self._prompts: dict[str, tuple[str, str]] = {}
        """Prompt name on `/mcp` -> (server, the server's own prompt name)."""
        self.on_update: Callable[[ServerEvent], Awaitable[None]] | None = None
        """Where a watched resource's update is announced on `/mcp` (the surface's announcer)."""
        self._watched: dict[str, dict[str, int]] = {}
        """URI -> server -> watches held through `/mcp`."""

    async def _each(self, ctx: Ctx, method: str, key: str) -> list[tuple[UpstreamEndpoint, dict[str, Any]]]:
        """Every item of one list of every server the caller may reach there, with its endpoint."""
        found: list[tuple[UpstreamEndpoint, dict[str, Any]]] = []
        for name in list(self.names()):
            endpoint = await self.endpoint_of(name)
            if endpoint is None or not endpoint.offers(method):
                continue
            try:
                items = await endpoint.listed(ctx, method, key, max_pages=_MAX_PAGES)
            except MCPError as exc:
                if exc.error.code != types.METHOD_NOT_FOUND:  # "not for this caller" stays silent
                    logger.warning("server %s: %s through /mcp failed: %s", name, method, exc.error.message)
                continue
            found.extend((endpoint, item) for item in items)
        return found

    def _namespaced(self, endpoint: UpstreamEndpoint, name: str) -> str:
        settings = endpoint.upstream.settings
        return to_wire(join_canonical(settings.tenant, settings.name, name), self.profile)

    async def resources(self, ctx: Ctx) -> list[types.Resource]:
        listed: list[types.Resource] = []
        uris: dict[str, str] = {}
        for endpoint, item in await self._each(ctx, "resources/list", "resources"):
            resource = types.Resource.model_validate(item)
            uri = str(resource.uri)
            if uri in uris:
                continue
            uris[uri] = endpoint.name
            listed.append(self._marked(endpoint, resource))
        self._uris = uris
        return listed

    async def templates(self, ctx: Ctx) -> list[types.ResourceTemplate]:
        listed: list[types.ResourceTemplate] = []
        starts: list[tuple[str, str]] = []
        for endpoint, item in await self._each(ctx, "resources/templates/list", "resourceTemplates"):
            template = types.ResourceTemplate.model_validate(item)
            starts.append((template.uri_template.split("{", 1)[0], endpoint.name))
            listed.append(self._marked(endpoint, template))
        self._templates = starts
        return listed

    async def prompts(self, ctx: Ctx) -> list[types.Prompt]:
        listed: list[types.Prompt] = []
        names: dict[str, tuple[str, str]] = {}
        for endpoint, item in await self._each(ctx, "prompts/list", "prompts"):
            prompt = types.Prompt.model_validate(item)
            shown = self._namespaced(endpoint, prompt.name)
            if shown in names:
                continue
            names[shown] = (endpoint.name, prompt.name)
            meta = {**(prompt.meta or {}), SERVER_META_KEY: endpoint.name}
            listed.append(prompt.model_copy(update={"name": shown, "meta": meta}))
        self._prompts = names
        return listed

    def _marked(self, endpoint: UpstreamEndpoint, item: Any) -> Any:
        meta = {**(item.meta or {}), SERVER_META_KEY: endpoint.name}
        return item.model_copy(update={"name": self._namespaced(endpoint, item.name), "meta": meta})

    async def read(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | dict[str, Any]:
        uri = str(params.uri)
        for name in await self._servers_of(ctx, uri):
            endpoint = await self.endpoint_of(name)
            if endpoint is not None:
                return _typed(await endpoint.read_for(ctx, params), types.ReadResourceResult)
        raise MCPError(
            types.INVALID_PARAMS, f"no resource {uri} (resources/list and resources/templates/list)"
        )

    async def _servers_of(self, ctx: Ctx, uri: str) -> list[str]:
        """The server that listed `uri`, else those whose templates can make it (listing again once)."""
        for attempt in range(2):
            if uri in self._uris:
                return [self._uris[uri]]
            matching = [server for start, server in self._templates if start and uri.startswith(start)]
            if matching:
                return list(dict.fromkeys(matching))
            if attempt == 0:
                await self.resources(ctx)
                await self.templates(ctx)
        return []

    async def watch(self, ctx: Ctx, uri: str) -> str:
        """Watch a downstream resource for a `/mcp` caller; the server that serves it."""
        for name in await self._servers_of(ctx, uri):
            endpoint = await self.endpoint_of(name)
            if endpoint is None:
                continue
            try:
                await endpoint.watch_for(ctx, uri)
            except MCPError as exc:
                if exc.error.code == types.METHOD_NOT_FOUND:
                    break  # not for this caller: as unknown as a URI nobody lists
                raise
            by_server = self._watched.setdefault(uri, {})
            by_server[name] = by_server.get(name, 0) + 1
            return name
        raise MCPError(
            types.INVALID_PARAMS, f"no resource {uri} (resources/list and resources/templates/list)"
        )

    async def unwatch(self, uri: str, server: str) -> None:
        by_server = self._watched.get(uri, {})
        if by_server.get(server, 0) == 0:
            return
        by_server[server] -= 1
        if by_server[server] == 0:
            del by_server[server]
            if not by_server:
                self._watched.pop(uri, None)
        endpoint = await self.endpoint_of(server)
        if endpoint is not None:
            await endpoint.unwatch(uri)

    @contextlib.asynccontextmanager
    async def watching(self, ctx: Ctx, uris: Sequence[str]) -> AsyncIterator[None]:
        """For one 2026-07-28 listen stream on `/mcp`: its downstream URIs watched while it lasts; a
        URI this caller may not read is left out (it hears of no update), as on the server's endpoint."""
        held: list[tuple[str, str]] = []
        try:
            for uri in dict.fromkeys(uris):
                try:
                    held.append((uri, await self.watch(ctx, uri)))
                except MCPError:
                    continue
            yield
        finally:
            for uri, server in held:
                with contextlib.suppress(Exception):
                    await self.unwatch(uri, server)

    async def server_event(self, server: str, event: ServerEvent) -> None:
        """A server's event (`servers.listeners`): the update of a resource watched through `/mcp` from
        that server is announced there."""
        if not isinstance(event, ResourceUpdated) or self.on_update is None:
            return
        if server in self._watched.get(event.uri, {}):
            await self.on_update(event)

    async def get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | dict[str, Any] | None:
        """The server's answer, or None when no server's prompt has this name on `/mcp`."""
        if params.name not in self._prompts:
            await self.prompts(ctx)
        found = self._prompts.get(params.name)
        if found is None:
            return None
        server, own = found
        endpoint = await self.endpoint_of(server)
        if endpoint is None:
            return None
        return _typed(
            await endpoint.prompt_for(ctx, params.model_copy(update={"name": own})), types.GetPromptResult
        )


def _typed(answer: dict[str, Any], result: type[_Result]) -> _Result | dict[str, Any]:
    """The server's answer as the SDK's result model (which the aggregated server's serialiser shapes
    per protocol era, as for its own results); an input round stays as the server sent it."""
    if is_input_required(answer):
        return answer
    return result.model_validate({key: value for key, value in answer.items() if key != "resultType"})
