"""What a downstream MCP server offers, and how it says that changed.

Its tools are read page by page (up to `MAX_PAGES`). Changes arrive as notifications on a
handshake-era session (`notifications/tools/list_changed`, prompts, resources, a resource updated)
and, in 2026-07-28, on a `subscriptions/listen` stream the server offers when its capabilities say
its lists change; both become the SDK's typed `ServerEvent`s.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["MAX_PAGES", "event_of", "list_tools", "listen_for_changes", "listen_for_updates"]

logger = logging.getLogger(__name__)

MAX_PAGES = 100


async def list_tools(session: ClientSession) -> tuple[types.Tool, ...]:
    """Every tool the server lists, in its order."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(tools)


async def listen_for_changes(
    session: ClientSession, on_event: Callable[[ServerEvent], Awaitable[None]]
) -> None:
    """2026-07-28: hand each change on the server's `subscriptions/listen` stream to `on_event`.

    Returns at once on a handshake-era session (its notifications come through the session's
    message handler) or when the server announces no changing list; ends when the stream does.
    """
    caps = session.server_capabilities
    if session.protocol_version not in MODERN_PROTOCOL_VERSIONS or caps is None:
        return
    tools = bool(caps.tools and caps.tools.list_changed)
    prompts = bool(caps.prompts and caps.prompts.list_changed)
    resources = bool(caps.resources and caps.resources.list_changed)
    if not (tools or prompts or resources):
        return
    try:
        async with listen(
            session, tools_list_changed=tools, prompts_list_changed=prompts, resources_list_changed=resources
        ) as subscription:
            async for event in subscription:
                await on_event(event)
    except (MCPError, RuntimeError, TimeoutError) as exc:
        logger.debug("a list-change subscription ended: %s", exc)


async def listen_for_updates(
    session: ClientSession, uri: str, on_event: Callable[[ServerEvent], Awaitable[None]]
) -> None:
    """2026-07-28: hand each update of one resource (a `subscriptions/listen` stream) to `on_event`;
    ends when the stream does."""
    try:
        async with listen(session, resource_subscriptions=[uri]) as subscription:
            async for event in subscription:
                await on_event(event)
    except (MCPError, RuntimeError, TimeoutError) as exc:
        logger.debug("a subscription to %s ended: %s", uri, exc)


def event_of(message: types.ServerNotification) -> ServerEvent | None:
    """The change a handshake-era notification announces, if it announces one."""
    if isinstance(message, types.ToolListChangedNotification):
        return ToolsListChanged()
    if isinstance(message, types.PromptListChangedNotification):
        return PromptsListChanged()
    if isinstance(message, types.ResourceListChangedNotification):
        return ResourcesListChanged()
    if isinstance(message, types.ResourceUpdatedNotification):
        return ResourceUpdated(uri=str(message.params.uri))
    return None
