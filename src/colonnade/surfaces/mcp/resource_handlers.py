"""`resources/*` and `prompts/*` on `/mcp`: the platform's own and the downstream servers', merged.

Either part may be absent: the platform's `colonnade://` resources and prompts are served when the
gateway serves its platform tools (`platform_resources.py`), the servers' when it has downstream
servers (`proxy/aggregate.py`). A `colonnade://` URI and a platform prompt's name always mean the
platform's; everything else is asked of the servers. Subscriptions cover the platform's resources;
a downstream resource is subscribed on its server's own endpoint.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from colonnade.platform.prompts import PLATFORM_PROMPTS
from colonnade.platform.resources import match_resource
from colonnade.surfaces.mcp.platform_resources import PlatformResources
from colonnade.surfaces.mcp.proxy.aggregate import AggregateResources

__all__ = ["ResourceHandlers"]

Ctx = ServerRequestContext[Any, Any]
_PLATFORM_PROMPTS = frozenset(p.name for p in PLATFORM_PROMPTS)


class ResourceHandlers:
    def __init__(self, platform: PlatformResources | None, servers: AggregateResources | None) -> None:
        self.platform = platform
        self.servers = servers

    def handlers(self) -> dict[str, Any]:
        """The low-level `Server`'s handler arguments (none when neither part is served)."""
        if self.platform is None and self.servers is None:
            return {}
        handlers: dict[str, Any] = {
            "on_list_resources": self.list_resources,
            "on_list_resource_templates": self.list_templates,
            "on_read_resource": self.read,
            "on_list_prompts": self.list_prompts,
            "on_get_prompt": self.get_prompt,
        }
        if self.platform is not None:
            handlers["on_subscribe_resource"] = self.subscribe
            handlers["on_unsubscribe_resource"] = self.platform.unsubscribe
        return handlers

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
        assert self.platform is not None
        uri = str(params.uri)
        if self.servers is not None and not _is_platform_uri(uri):
            message = f"{uri} is a downstream server's resource: subscribe on /servers/{{name}}/mcp"
            raise MCPError(types.INVALID_PARAMS, message)
        return await self.platform.subscribe(ctx, params)

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
