"""The FastMCP peer of `bench/federation_overhead.py --peer fastmcp`: FastMCP's own proxy in front of
one upstream, set up the way FastMCP's proxy docs give for a stateless HTTP backend (a reused
upstream session instead of a fresh one per call), served over Streamable HTTP with no auth.

It runs in the peer's own venv (`bench/peers.py install fastmcp`), never in the project's: FastMCP is
no dependency of Colonnade. Choices, each the cheapest FastMCP offers and each what our gateway gets:
- one upstream session per protocol era, connected at start and held open for the process's life.
  FastMCP's recipe (`FastMCPProxy(client_factory=lambda: shared_client)`) alone reconnects whenever
  no call holds the client (its sessions are reference counted), i.e. on every sequential call;
- the upstream era follows the caller's era, as `create_proxy` does by default (and as the gateway
  does): a 2026-07-28 caller is forwarded over a 2026-07-28 session, a handshake-era caller over a
  handshake-era session;
- answers as one JSON body (`json_response=True`), like the echo upstream and the gateway;
- uvicorn with uvloop and httptools, the gateway's own server stack.

Run (from the peer venv): .bench-peers/fastmcp/bin/python bench/peer_fastmcp.py --port P --upstream URL
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

import uvicorn
import uvloop
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers.proxy import FastMCPProxy, ProxyClient
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

LEGACY = "legacy"


def _front_era() -> str:
    """The connect mode matching the caller's negotiated era: its modern version, or `legacy`."""
    request = get_context().request_context
    version = request.protocol_version if request is not None else None
    return version if version in MODERN_PROTOCOL_VERSIONS else LEGACY


async def serve(port: int, upstream: str) -> None:
    """Connect one upstream session per era, then serve the proxy on `port` until stopped."""
    modes = (*MODERN_PROTOCOL_VERSIONS, LEGACY)
    sessions: dict[str, Any] = {mode: ProxyClient(upstream, mode=mode).new() for mode in modes}
    async with contextlib.AsyncExitStack() as held:
        for session in sessions.values():
            await held.enter_async_context(session)
        proxy = FastMCPProxy(client_factory=lambda: sessions[_front_era()], name="fastmcp-peer")
        app = proxy.http_app(path="/mcp", json_response=True)
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", http="httptools")
        await uvicorn.Server(config).serve()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="the upstream's Streamable HTTP URL")
    arguments = parser.parse_args()
    uvloop.run(serve(arguments.port, arguments.upstream))


if __name__ == "__main__":
    main()
