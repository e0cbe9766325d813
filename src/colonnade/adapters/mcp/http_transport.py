"""The `mcp` SDK's HTTP client, carried by aiohttp: the SDK speaks to Streamable HTTP servers through
an `httpx2.AsyncClient`, and this transport sends its requests over aiohttp's connection pool.

aiohttp is the gateway's HTTP client (DESIGN §4): on this machine one request costs its sender about
0.15 ms of CPU through aiohttp against 0.6 ms through httpx2's default transport, and a proxied call
makes one request per round trip. Bodies stream both ways (SSE answers are read as they arrive);
redirects are left to the SDK (it follows only same-origin ones); transport failures become the
httpx2 errors the SDK handles. A 404 to a request of a session means the server no longer knows
the session: the SDK's client fails that request and keeps the session, but the spec says a client
MUST start a new one, so the owner hears of it (`on_session_gone`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

import aiohttp
import httpx2

__all__ = ["AiohttpTransport", "cannot_connect"]

_CHUNK = 64 * 1024


class _Body(httpx2.AsyncByteStream):
    """An aiohttp response's body, chunk by chunk as it arrives; closing it releases the connection."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_chunked(_CHUNK):
                yield chunk
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise httpx2.ReadError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self._response.release()


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """One aiohttp session (its own pool) for the requests of one httpx2 client."""

    def __init__(self, on_session_gone: Callable[[], None] = lambda: None) -> None:
        self.on_session_gone = on_session_gone
        self._session: aiohttp.ClientSession | None = None
        """The `Mcp-Session-Id` and `MCP-Protocol-Version` the SDK last sent in a session (handshake era)."""

    def pool(self) -> aiohttp.ClientSession:
        """The aiohttp session (opened on first use), also for requests made without httpx2."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False, trust_env=False
            )
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeouts = request.extensions.get("timeout", {})
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeouts.get("connect"), sock_read=timeouts.get("read")
        )
        body = await request.aread()
        try:
            response = await self.pool().request(
                request.method,
                str(request.url),
                headers=list(request.headers.multi_items()),
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
                skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
            )
        except aiohttp.ClientConnectorError as exc:
            raise httpx2.ConnectError(cannot_connect(str(request.url), exc), request=request) from exc
        except TimeoutError as exc:
            raise httpx2.TimeoutException(str(exc) or "timed out", request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx2.TransportError(str(exc) or type(exc).__name__, request=request) from exc
        if response.status == 404 and "mcp-session-id" in request.headers and request.method != "DELETE":
            self.on_session_gone()
        headers = list(response.raw_headers)
        return httpx2.Response(response.status, headers=headers, stream=_Body(response), request=request)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(Exception):
                await session.close()


def cannot_connect(url: str, exc: aiohttp.ClientConnectorError) -> str:
    """Where the gateway tried to connect and what it met, in the terms of the server's `url`."""
    if isinstance(exc.os_error, ConnectionRefusedError):
        why = "connection refused (is the server running, and listening at that address?)"
    else:
        why = exc.os_error.strerror or str(exc.os_error) or type(exc.os_error).__name__
    return f"cannot connect to {url}: {why}"
