"""An MCP server (the SDK's low-level `Server`) whose tool list the test changes while it runs:
the downstream half of the change-control suite (`tests/federation/test_tool_admission.py`)."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from starlette.types import ASGIApp

__all__ = ["DriftingServer"]

_ECHO = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class DriftingServer:
    """Tools by name, listed in insertion order; `tools` may be edited between listings."""

    def __init__(self) -> None:
        self.tools: dict[str, types.Tool] = {
            "echo": types.Tool(name="echo", description="Echo the text back.", input_schema=_ECHO),
            "shout": types.Tool(name="shout", description="Echo the text in capitals.", input_schema=_ECHO),
        }
        self.listings = 0
        self.server: Server[Any] = Server(
            "drifting", version="1.0.0", on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )

    def describe(self, name: str, description: str) -> None:
        self.tools[name] = self.tools[name].model_copy(update={"description": description})

    def add(self, name: str, description: str) -> None:
        self.tools[name] = types.Tool(name=name, description=description, input_schema=_ECHO)

    def app(self) -> ASGIApp:
        return self.server.streamable_http_app(host="127.0.0.1")

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        self.listings += 1
        return types.ListToolsResult(tools=list(self.tools.values()))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        answer = text.upper() if params.name == "shout" else text
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])
