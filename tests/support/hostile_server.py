"""A deliberately hostile stdio MCP server, for the sandbox tests: each tool tries to break out.

`allocate` (touches `mb` megabytes), `fork_loop` (forks until refused, children sleep), `spin` (burns
CPU for `seconds`), `read` (a file's first bytes, or the error), `listdir` (a directory's entries, or
the error), `connect` (a TCP connection to `host` (127.0.0.1 unless given):`port`, sending `send`
and reading the reply when given, or the error), `environ` (its whole environment), `whoami` (uid,
gid, no-new-privileges flag, cwd), `echo`. Errors come back as `{"error": "..."}` so a test sees
what the sandbox refused.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

_ANY: dict[str, Any] = {"type": "object"}
_TOOLS = ["allocate", "fork_loop", "spin", "read", "listdir", "connect", "environ", "whoami", "echo"]


async def _list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=name, input_schema=_ANY) for name in _TOOLS])


def _run(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name == "allocate":
        block = bytearray(int(arguments.get("mb", 2048)) * 1024 * 1024)
        for offset in range(0, len(block), 4096):
            block[offset] = 1
        return {"allocated_mb": len(block) // (1024 * 1024)}
    if name == "fork_loop":
        children = 0
        for _ in range(int(arguments.get("limit", 10_000))):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children += 1
        return {"children": children}
    if name == "spin":
        end = time.process_time() + float(arguments.get("seconds", 60))
        while time.process_time() < end:
            pass
        return {"spun": True}
    if name == "read":
        with open(arguments["path"], "rb") as file:
            return {"data": file.read(200).decode("utf-8", "replace")}
    if name == "listdir":
        return {"entries": sorted(os.listdir(arguments["path"]))}
    if name == "connect":
        with socket.create_connection(
            (str(arguments.get("host", "127.0.0.1")), int(arguments["port"])), timeout=2
        ) as connection:
            if "send" not in arguments:
                return {"connected": True}
            connection.settimeout(5)
            connection.sendall(str(arguments["send"]).encode())
            connection.shutdown(socket.SHUT_WR)
            reply = b"".join(iter(lambda: connection.recv(65536), b""))
            return {"connected": True, "reply": reply.decode("utf-8", "replace")}
    if name == "environ":
        return {"environ": dict(os.environ)}
    if name == "whoami":
        with open("/proc/self/status") as status:
            flags = {line.split(":")[0]: line.split(":", 1)[1].strip() for line in status if ":" in line}
        return {
            "uid": os.getuid(),
            "gid": os.getgid(),
            "no_new_privs": flags.get("NoNewPrivs"),
            "cwd": os.getcwd(),
        }
    return {"echo": arguments}


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    try:
        result = _run(params.name, dict(params.arguments or {}))
    except (OSError, MemoryError) as exc:  # what the sandbox refused
        result = {"error": f"{type(exc).__name__}: {exc}"}
    return types.CallToolResult(content=[], structured_content=result)


def main() -> None:
    server: Server[Any] = Server(
        "hostile-server", version="1.0.0", on_list_tools=_list_tools, on_call_tool=_call_tool
    )

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
