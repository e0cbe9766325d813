"""The floor under any gateway built on the official MCP SDK: a tools/call that does nothing.

Two servers on the same uvicorn (httptools, uvloop), each a child process on loopback: (1) the
`mcp` SDK's low-level Server whose tool returns a constant result, on the 2026-07-28 stateless
JSON wire; (2) a plain Starlette route returning the same JSON. The difference is what the SDK
costs per call before a gateway does any work of its own.

Run: .venv/bin/python bench/mcp_sdk_floor.py [--calls 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent))
from call_overhead import _HEADERS, TOOL, _mcp_body

_TEXT = '{"id":"C-1001"}'


async def _call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_TEXT)], structured_content={"id": "C-1001"}
    )


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name=TOOL, input_schema={"type": "object"})])


def _sdk_app() -> Any:
    server = Server(
        "floor", on_call_tool=_call_tool, on_list_tools=_list_tools, get_tool_input_schema=lambda _: {}
    )
    return server.streamable_http_app(json_response=True)


def _plain_app() -> Starlette:
    async def plain(request: Request) -> JSONResponse:
        await request.body()
        result = {"content": [{"type": "text", "text": _TEXT}], "structuredContent": {"id": "C-1001"}}
        return JSONResponse({"jsonrpc": "2.0", "id": 1, "result": result})

    return Starlette(routes=[Route("/mcp", plain, methods=["POST"])])


def _serve(kind: str, port: int) -> None:
    app = _sdk_app() if kind == "sdk" else _plain_app()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="error", http="httptools", loop="uvloop"
    )
    uvicorn.Server(config).run()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _median_ms(url: str, calls: int) -> float:
    samples = []
    async with httpx2.AsyncClient() as client:
        for i in range(calls + 200):
            started = time.perf_counter()
            response = await client.post(url, json=_mcp_body(i), headers=_HEADERS)
            response.raise_for_status()
            if i >= 200:
                samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main(calls: int) -> None:
    ports = {"mcp SDK, no-op tool": _free_port(), "plain Starlette route": _free_port()}
    kinds = dict(zip(ports, ("sdk", "plain"), strict=True))
    procs = [
        multiprocessing.Process(target=_serve, args=(kinds[n], p), daemon=True) for n, p in ports.items()
    ]
    for proc in procs:
        proc.start()
    try:
        time.sleep(3)
        for name, port in ports.items():
            median = asyncio.run(_median_ms(f"http://127.0.0.1:{port}/mcp", calls))
            print(f"{name:24s} median {median:.3f} ms over {calls} sequential calls")
    finally:
        for proc in procs:
            proc.terminate()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000, help="calls per server (default 1000)")
    main(parser.parse_args().calls)
