"""Platform and discovery: what this gateway is, whether it is healthy, which tools the caller has,
and its configuration with secrets redacted. (Searching tools is the discovery tool `search_tools`.)"""

from __future__ import annotations

from typing import Any

from colonnade import __version__
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import permits, tool_filter
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.governance.tool_lookup import AmbiguousName, find_tool
from colonnade.observability.redaction import scrub
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.personas import EVERYONE, OPERATORS
from colonnade.platform.refusal import PlatformRefusal
from colonnade.platform.schemas import ANY_OBJECT, array, boolean, integer, obj, output, string
from colonnade.platform.services import PlatformServices

__all__ = ["DISCOVERY_TOOLS", "tool_card", "visible_builtins"]

GROUP = "Platform and discovery"
MAX_PAGE = 200

_CARD = output(
    ("name", "canonical_name", "summary", "side_effects", "kind"),
    name=string("Wire name: call the tool with it."),
    canonical_name=string(),
    title=string(),
    summary=string(),
    side_effects=string(enum=["none", "read", "write", "destructive"]),
    kind=string("api: an API's or server's tool; gateway: the gateway's own", enum=["api", "gateway"]),
)


def tool_card(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.wire_name,
        "canonical_name": tool.canonical_name,
        "title": tool.title,
        "summary": tool.summary,
        "side_effects": tool.side_effects.value,
        "kind": "gateway" if tool.builtin else "api",
    }


def visible_builtins(services: PlatformServices, principal: Principal) -> list[Tool]:
    allowed = services.authorizer.visible(principal)
    return [tool for tool in services.builtins if permits(allowed, tool.canonical_name)]


async def platform_info(
    services: PlatformServices, principal: Principal, _: dict[str, Any]
) -> dict[str, Any]:
    settings = services.settings
    allowed = services.authorizer.visible(principal)
    tools = [tool for tool in services.catalog.tools() if permits(allowed, tool.canonical_name)]
    return {
        "name": "colonnade",
        "version": __version__,
        "tools": len(tools),
        "apis": len({(tool.tenant, tool.api) for tool in tools if tool.source == "contract"}),
        "catalog_version": services.catalog.version,
        "gateway_tools": len(visible_builtins(services, principal)),
        "authentication": settings.auth.configured,
        "database": "postgresql" if (settings.database_url or "").startswith("postgresql") else "sqlite",
        "caller": {
            "principal": principal.key,
            "persona": principal.persona,
            "tenant": principal.tenant,
            "team": principal.team,
            "scopes": sorted(principal.scopes),
        },
    }


async def health_check(services: PlatformServices, _: Principal, __: dict[str, Any]) -> dict[str, Any]:
    status = await services.status()
    checks: dict[str, Any] = status.get("checks", {})
    servers: list[dict[str, Any]] = status.get("servers", [])
    return {
        "ok": all(bool(check.get("ok")) for check in checks.values()),
        "checks": checks,
        "servers": servers,
        "shared_state": status.get("shared_state"),
        "policy": status.get("policy"),
    }


async def list_tools(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    cursor, limit = args.get("cursor"), int(args.get("limit", 50))
    include = tool_filter(services.authorizer.listed(principal))
    try:
        tools, next_cursor = services.catalog.page(cursor, limit, include)
    except ValueError as exc:
        raise PlatformRefusal("I-REQ-CURSOR", f"cursor: {exc}; start again without one") from None
    own = visible_builtins(services, principal) if cursor is None and args.get("gateway_tools", True) else []
    return {"tools": [tool_card(tool) for tool in [*own, *tools]], "next_cursor": next_cursor}


async def get_tool_schema(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    name = str(args["name"])
    allowed = services.authorizer.visible(principal)
    found: Tool | AmbiguousName | None = services.builtins.get(name)
    if found is None:
        found = find_tool(services.catalog, name, services.authorizer, principal)
    if isinstance(found, AmbiguousName):
        raise PlatformRefusal(found.code, found.message, **found.details)
    if found is None or not permits(allowed, found.canonical_name):
        raise PlatformRefusal(
            "I-REQ-UNKNOWN-TOOL", f"no tool named '{name}' (colonnade__list_tools lists yours)", tool_id=name
        )
    return {
        **tool_card(found),
        "description": found.description,
        "version": found.version,
        "input_schema": found.input_schema,
        "output_schema": found.mcp_output_schema,
        "annotations": found.annotations.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True),
    }


async def get_config(services: PlatformServices, _: Principal, __: dict[str, Any]) -> dict[str, Any]:
    settings = services.settings.model_dump(mode="json")
    redacted: dict[str, Any] = scrub(settings)
    return {"settings": redacted, "redacted": "values named like secrets, and secret-looking text"}


DISCOVERY_TOOLS = (
    CoreTool(
        name="platform_info",
        adr_name="platform info",
        group=GROUP,
        title="Platform info",
        description=(
            "This gateway: its version, how many APIs and tools it serves you, and who you are to it."
        ),
        input_schema=obj(),
        output_schema=output(
            ("name", "version", "tools", "apis", "caller"),
            name=string(),
            version=string(),
            tools=integer(),
            apis=integer(),
            catalog_version=integer(),
            gateway_tools=integer(),
            authentication=boolean(),
            database=string(),
            caller=ANY_OBJECT,
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=platform_info,
    ),
    CoreTool(
        name="health_check",
        adr_name="health check",
        group=GROUP,
        title="Health check",
        description=(
            "Whether the gateway is ready: database, catalog, downstream servers, shared state, policy."
        ),
        input_schema=obj(),
        output_schema=output(
            ("ok", "checks", "servers"), ok=boolean(), checks=ANY_OBJECT, servers=array(ANY_OBJECT)
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=health_check,
    ),
    CoreTool(
        name="list_tools",
        adr_name="list tools",
        group=GROUP,
        title="List tools",
        description=(
            "The tools you may call, a page at a time: the gateway's own first, then the APIs' in name "
            "order. Pass next_cursor back to get the next page."
        ),
        input_schema=obj(
            cursor=string("next_cursor of the page before"),
            limit=integer("tools per page", minimum=1, maximum=MAX_PAGE, default=50),
            gateway_tools=boolean("include the gateway's own tools on the first page (default true)"),
        ),
        output_schema=output(
            ("tools", "next_cursor"), tools=array(_CARD), next_cursor={"type": ["string", "null"]}
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=list_tools,
    ),
    CoreTool(
        name="get_tool_schema",
        adr_name="get tool schema",
        group=GROUP,
        title="Get a tool's schema",
        description=(
            "One tool you may call, by wire, canonical or unique bare name: its schemas and annotations."
        ),
        input_schema=obj(("name",), name=string("wire, canonical or bare tool name", minLength=1)),
        output_schema=output(
            ("name", "canonical_name", "input_schema"),
            name=string(),
            canonical_name=string(),
            input_schema=ANY_OBJECT,
            output_schema={"type": ["object", "null"]},
            annotations=ANY_OBJECT,
        ),
        scopes=(Scope.CATALOG_READ,),
        personas=EVERYONE,
        run=get_tool_schema,
    ),
    CoreTool(
        name="get_config",
        adr_name="get config",
        group=GROUP,
        title="Get the configuration",
        description="The gateway's effective settings, with secrets and secret-looking values redacted.",
        input_schema=obj(),
        output_schema=output(("settings",), settings=ANY_OBJECT, redacted=string()),
        scopes=(Scope.PLATFORM_READ,),
        personas=OPERATORS,
        run=get_config,
    ),
)
