"""The upstream of `bench/federation_overhead.py`: one trivial `echo` tool on the `mcp` SDK's
low-level `Server`, over Streamable HTTP with JSON responses (the cheapest answer the SDK gives).

Run: .venv/bin/python bench/echo_upstream.py --port 38400
"""

from __future__ import annotations

import argparse
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
_ECHO = types.Tool(
    name="echo",
    description="Answers with the text it was given.",
    input_schema=_SCHEMA,
    annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
)


async def _list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_ECHO])


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    server: Server[Any] = Server("echo", version="1.0.0", on_list_tools=_list_tools, on_call_tool=_call_tool)
    app = server.streamable_http_app(host="127.0.0.1", json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", http="httptools")


if __name__ == "__main__":
    main()
