"""`resources/*` and `prompts/*` on `/mcp`: the platform's `colonnade://` resources and its prompts.

A read is one call of the resource's core tool through the pipeline with the caller's principal
(`platform/resources.py`), rendered as JSON text; a resource whose tool the caller may not see is
neither listed nor readable nor subscribable ("not found", as for an unknown URI). Updates reach the
handshake-era connections subscribed to a URI and the 2026-07-28 `subscriptions/listen` streams that
name it, through the surface's announcer.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError

from colonnade.calls.envelope import CallRequest
from colonnade.calls.service import CallService
from colonnade.governance.authorization import Authorizer, permits
from colonnade.governance.principal import Principal
from colonnade.platform.changes import ResourceChanges
from colonnade.platform.prompts import PLATFORM_PROMPTS, find_prompt
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.resources import PLATFORM_RESOURCES, PlatformResource, match_resource
from colonnade.surfaces.mcp.announcer import Announcer
from colonnade.surfaces.mcp.caller import principal_of

__all__ = ["PlatformResources"]

_JSON = "application/json"


class PlatformResources:
    def __init__(
        self,
        calls: CallService,
        authorizer: Authorizer,
        principal: Principal,
        announcer: Announcer,
        changes: ResourceChanges | None = None,
    ) -> None:
        self.calls = calls
        self.authorizer = authorizer
        self.principal = principal
        self.announcer = announcer
        if changes is not None:
            changes.subscribe(self._changed)

    def handlers(self) -> dict[str, Any]:
        """The low-level `Server`'s handler arguments this part serves."""
        return {
            "on_list_resources": self.list_resources,
            "on_list_resource_templates": self.list_templates,
            "on_read_resource": self.read,
            "on_subscribe_resource": self.subscribe,
            "on_unsubscribe_resource": self.unsubscribe,
            "on_list_prompts": self.list_prompts,
            "on_get_prompt": self.get_prompt,
        }

    def _seen(self, ctx: ServerRequestContext[Any, Any]) -> list[PlatformResource]:
        allowed = self.authorizer.visible(principal_of(ctx, self.principal))
        return [resource for resource in PLATFORM_RESOURCES if permits(allowed, resource.canonical_tool)]

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed = [
            types.Resource(uri=r.uri, name=r.name, title=r.title, description=r.description, mime_type=_JSON)
            for r in self._seen(ctx)
            if not r.template
        ]
        return types.ListResourcesResult(resources=listed)

    async def list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        templates = [
            types.ResourceTemplate(
                uri_template=r.uri, name=r.name, title=r.title, description=r.description, mime_type=_JSON
            )
            for r in self._seen(ctx)
            if r.template
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    def _resource(
        self, ctx: ServerRequestContext[Any, Any], uri: str
    ) -> tuple[PlatformResource, dict[str, Any]]:
        matched = match_resource(uri)
        if matched is None or matched[0] not in self._seen(ctx):
            raise MCPError(
                types.INVALID_PARAMS, f"no resource {uri} (resources/list and resources/templates/list)"
            )
        return matched

    async def read(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        resource, arguments = self._resource(ctx, uri)
        request = CallRequest(tool_id=resource.wire_tool, input=arguments)
        result = await self.calls.call(request, principal_of(ctx, self.principal))
        if not result.ok or result.error is not None:
            err = result.error
            code = err.code if err is not None else "S-TOOL-INTERNAL"
            message = err.message if err is not None else "the resource could not be read"
            data = {"code": code, "fix": err.fix if err is not None else None, "call_id": result.call_id}
            raise MCPError(types.INVALID_PARAMS, f"{uri}: {code}: {message}", data)
        text = json.dumps(result.output, ensure_ascii=False, separators=(",", ":"))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=_JSON, text=text)]
        )

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        self._resource(ctx, uri)
        if ctx.session is not None:
            self.announcer.subscribe(ctx.session, uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        if ctx.session is not None:
            self.announcer.subscribe(ctx.session, str(params.uri), on=False)
        return types.EmptyResult()

    async def _changed(self, uris: frozenset[str]) -> None:
        for uri in sorted(uris):
            await self.announcer.announce(ResourceUpdated(uri=uri))

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts = [
            types.Prompt(
                name=p.name,
                title=p.title,
                description=p.description,
                arguments=[
                    types.PromptArgument(name=a.name, description=a.description, required=a.required)
                    for a in p.arguments
                ],
            )
            for p in PLATFORM_PROMPTS
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            prompt = find_prompt(params.name)
            text = prompt.text(dict(params.arguments or {}))
        except PlatformRefusal as refused:
            raise MCPError(types.INVALID_PARAMS, refused.message, {"code": refused.refusal_code}) from None
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        return types.GetPromptResult(description=prompt.description, messages=[message])
