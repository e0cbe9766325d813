"""The MCP client of the client commands (`smoke`, `tools`): the official SDK's, with a credential.

A gateway with authentication refuses requests without a credential; the client commands send
`COLONNADE_TOKEN`, or the demo's token file, as `Authorization: Bearer ...` on every request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Literal

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["Mode", "connect"]

Mode = Literal["auto", "legacy"]
_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults (long reads for streams)


@contextlib.asynccontextmanager
async def connect(url: str, *, token: str | None = None, mode: Mode = "auto") -> AsyncIterator[Client]:
    """A connected client of the gateway at `url`, sending `token` when given."""
    if token is None:
        async with Client(url, mode=mode) as client:
            yield client
        return
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=_TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client
