"""A downstream MCP server as its per-server endpoint serves it: what the endpoint reads and sends.

The runtime's pool holds the server sessions (`adapters/mcp/upstream.py`); a surface never imports
them, so it names here what it needs of one, and the composition root hands over the real sessions,
which fit this protocol as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import mcp_types as types

from colonnade.config import McpServerSettings
from colonnade.mcp_relay.answer import UpstreamDown
from colonnade.mcp_relay.relay import Relay

__all__ = ["Build", "ServedUpstream"]

Build = Callable[[types.InputResponses | None, str | None, dict[str, Any]], Any]
"""Builds a request from the caller's answers to an input round, its request state and `_meta`."""


class ServedUpstream(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> McpServerSettings: ...

    @property
    def tools(self) -> tuple[types.Tool, ...]:
        """The server's current tool list (empty until it is known)."""

    @property
    def negotiated(self) -> str | None:
        """The protocol version its session negotiated (None before the first session)."""

    @property
    def protocol_version(self) -> str | None:
        """The protocol version its calls are sent in."""

    @property
    def server_capabilities(self) -> types.ServerCapabilities | None: ...

    def accept_tools(self, tools: tuple[types.Tool, ...]) -> None:
        """A complete, current tool list of the server, as a caller's listing found it."""

    def unavailable(self) -> UpstreamDown | None:
        """Why a request would be refused now (held: `UpstreamHeld` with its typed code; stopped or
        down), without waiting; None while it is ready or coming up."""

    async def exchange(self, build: Build, *, relay: Relay, timeout_s: float) -> dict[str, Any]:
        """Send one request and return its raw answer; raises `UpstreamDown`, `MCPError`, `TimeoutError`."""

    async def follow_resource(self, uri: str) -> None:
        """Pass on the server's updates of one resource until cancelled (2026-07-28)."""
