"""A downstream MCP server that misbehaves on request, for the gateway's failure tests.

Tools: `pid` (its process id, so a test can kill it), `sleep` (answers after `seconds`), `hang`
(never answers), `cancelled` (how many `hang` calls the client cancelled), `env` (one variable of
its environment), `authorization` (the Authorization header of the HTTP request), `echo`, `touch`
(the resource named `name` changed: an update on the `subscriptions/listen` streams that watch it),
`listening` (how many `subscriptions/listen` streams are open on it now), `request` (how the call
arrived: its JSON-RPC id, the `Mcp-Session-Id` header over HTTP, whether it named a progress token),
`roots` (asks the client for its roots on the call's stream, in a session; says what came back),
`meta` (the `_meta` the call arrived with). The tools named in `MALFORMED` answer with a result
that is not a valid `CallToolResult` for them (wrong types, missing content, an unknown result
type, a `_meta` that is not an object, structured content that breaks the tool's output schema,
or none where the schema asks for it), sent past the SDK's own check of a handler's result, in
either transport and era.
Served over stdio (default) or Streamable HTTP (`--port`); over HTTP a call of the tool `garbage` is answered
with a body that is not JSON at all, as a broken server or proxy would. Built on the SDK's
low-level `Server`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["build_server", "main"]

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"seconds": {"type": "number"}, "name": {"type": "string"}},
}
_COUNT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
}
_TEXT = [{"type": "text", "text": "malformed"}]
MALFORMED: dict[str, dict[str, Any]] = {
    "content_not_a_list": {"resultType": "complete", "content": "not a list"},
    "no_content": {"resultType": "complete", "structuredContent": {"count": 1}},
    "block_without_text": {"resultType": "complete", "content": [{"type": "text"}]},
    "is_error_not_a_bool": {"resultType": "complete", "content": _TEXT, "isError": "yes"},
    "structured_not_an_object": {"resultType": "complete", "content": _TEXT, "structuredContent": [1]},
    "unknown_result_type": {"resultType": "bogus", "content": _TEXT},
    "meta_not_an_object": {"resultType": "complete", "content": _TEXT, "_meta": "not an object"},
    "off_schema": {"resultType": "complete", "content": _TEXT, "structuredContent": {"count": "three"}},
    "no_structured": {"resultType": "complete", "content": _TEXT},
}
"""What each malformed tool answers; the last two declare `_COUNT_SCHEMA` as their output schema."""
_WITH_SCHEMA = frozenset({"off_schema", "no_structured"})
_CANCELLED = [0]
_BUS = InMemorySubscriptionBus()
_LISTEN = ListenHandler(_BUS)
_LISTENING = [0]


async def _listen(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
    """The SDK's listen handler, counted while its stream is open."""
    _LISTENING[0] += 1
    try:
        return await _LISTEN(ctx, params)
    finally:
        _LISTENING[0] -= 1


async def _list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    names = (
        "pid",
        "sleep",
        "hang",
        "cancelled",
        "env",
        "authorization",
        "echo",
        "garbage",
        "touch",
        "listening",
        "request",
        "roots",
        "meta",
        *MALFORMED,
    )
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=name,
                description=f"{name} (fault server)",
                input_schema=_SCHEMA,
                output_schema=_COUNT_SCHEMA if name in _WITH_SCHEMA else None,
            )
            for name in names
        ]
    )


async def _malformed(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
    """Server middleware: a malformed tool's answer, returned before the SDK checks a handler's result;
    `meta`'s answer, from the request's params as they arrived."""
    params = ctx.params or {}
    if ctx.method == "tools/call" and params.get("name") in MALFORMED:
        return dict(MALFORMED[params["name"]])
    if ctx.method == "tools/call" and params.get("name") == "meta":  # the `_meta` as it came, unparsed
        meta = dict(params.get("_meta") or {})
        return {"resultType": "complete", "content": [], "structuredContent": {"meta": meta}}
    return await call_next(ctx)


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "pid":
        return types.CallToolResult(content=[], structured_content={"pid": os.getpid()})
    if params.name == "env":
        return types.CallToolResult(
            content=[], structured_content={"value": os.environ.get(arguments["name"])}
        )
    if params.name == "authorization":
        request = ctx.request
        header = request.headers.get("authorization") if request is not None else None  # type: ignore[attr-defined]
        return types.CallToolResult(content=[], structured_content={"value": header})
    if params.name == "cancelled":
        return types.CallToolResult(content=[], structured_content={"cancelled": _CANCELLED[0]})
    if params.name == "request":
        request = ctx.request
        session = request.headers.get("mcp-session-id") if request is not None else None
        meta: dict[str, Any] = dict(ctx.meta or {})
        progress = meta.get("progress_token", meta.get("progressToken")) is not None
        return types.CallToolResult(
            content=[], structured_content={"id": ctx.request_id, "session": session, "progress": progress}
        )
    if params.name == "roots":
        try:
            listed = await ctx.session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
            answer = f"{len(listed.roots)} roots"
        except MCPError as exc:
            answer = f"refused: {exc.error.message}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])
    if params.name == "listening":
        return types.CallToolResult(content=[], structured_content={"listening": _LISTENING[0]})
    if params.name == "touch":
        await _BUS.publish(ResourceUpdated(uri=str(arguments["name"])))
    if params.name == "sleep":
        await asyncio.sleep(float(arguments.get("seconds", 1)))
    elif params.name == "hang":
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            _CANCELLED[0] += 1
            raise
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} done")])


async def _list_resources(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourcesResult:
    """One resource to watch (`touch` announces an update of any)."""
    return types.ListResourcesResult(resources=[types.Resource(uri="test://watched", name="watched")])


def build_server() -> Server[Any]:
    server: Server[Any] = Server(
        "fault-server",
        version="1.0.0",
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_subscriptions_listen=_listen,
    )
    server.middleware.append(_malformed)
    return server


class _GarbageForTheGarbageTool:
    """Answers a POST that calls the tool `garbage` with a body that is not JSON."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        if b'"garbage"' in body:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": b"<html>this is not JSON</html>"})
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=None, help="serve Streamable HTTP on this port")
    args = parser.parse_args()
    server = build_server()
    if args.port is None:

        async def serve_stdio() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve_stdio)
        return
    app = _GarbageForTheGarbageTool(server.streamable_http_app(host="127.0.0.1"))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", http="h11")


if __name__ == "__main__":
    main()
