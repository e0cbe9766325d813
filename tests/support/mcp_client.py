"""Small helpers for tests that talk to an MCP endpoint with the official client."""

from __future__ import annotations

import mcp_types as types
from mcp import Client

__all__ = ["all_tools"]


async def all_tools(client: Client) -> list[types.Tool]:
    """Every tool of every page, bypassing the client's response cache."""
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
