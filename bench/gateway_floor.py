"""The floor of a Python gateway on this stack: uvicorn in, aiohttp out, nothing in between.

A raw ASGI app served the way `colonnade serve` serves (uvicorn, httptools, uvloop) that answers
`POST /v1/calls` and `POST /mcp` by reading and parsing the JSON body, fetching the demo's
customer from the backend with aiohttp (one pooled session), and answering a JSON envelope
(REST) or a JSON-RPC tools/call result (MCP). No pipeline, no audit, no validation, no logging:
the CPU it spends per call is what any gateway built from these parts pays before doing any of
its own work. `bench/gateway_ab.py --floor` runs it beside the gateways it compares, so the
floor's gateway/backend ratio comes from the same run.

Run alone: .venv/bin/python bench/gateway_floor.py --port 8900 --backend http://127.0.0.1:8901
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import aiohttp
import uvicorn

CUSTOMER_PATH = "/customers/C-1001"


class Floor:
    """The ASGI app: one aiohttp session, opened at start-up and closed at shutdown."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.http: aiohttp.ClientSession | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body) if body else {}
        assert self.http is not None
        async with self.http.get(self.backend + CUSTOMER_PATH) as response:
            customer = await response.json()
        if scope["path"] == "/mcp":
            text = json.dumps(customer)
            answer = {
                "jsonrpc": "2.0",
                "id": request.get("id"),
                "result": {"content": [{"type": "text", "text": text}], "structuredContent": customer},
            }
        else:
            answer = {"status": "success", "output": customer}
        payload = json.dumps(answer, separators=(",", ":")).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.http = aiohttp.ClientSession()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.http is not None:
                    await self.http.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, required=True, help="loopback port to serve on")
    parser.add_argument("--backend", required=True, help="the demo backend's base URL")
    args = parser.parse_args()
    uvicorn.run(Floor(args.backend), host="127.0.0.1", port=args.port, log_level="warning", http="httptools")


if __name__ == "__main__":
    main()
