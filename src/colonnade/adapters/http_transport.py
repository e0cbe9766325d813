"""A pooled HTTP/1.1 transport for `httpx2.AsyncClient` on asyncio and httptools.

httpx2's own transport (httpcore2 + h11, pure Python) costs the gateway about half a millisecond
of CPU per backend request. This one hands each request to an `HttpConnection` (written in one
piece, parsed by httptools in C), so the adapter keeps httpx2's client API and pays mostly for the
socket. This module is the pool: keep-alive connections per origin within `httpx2.Limits`, pool
and connect timeouts, and one resend when a reused idle connection turns out to be closed, only
when resending cannot repeat an effect (idempotent method, `Idempotency-Key`, or nothing written).
HTTP/1.1 only: no HTTP/2, proxies or upgrades (`HttpAdapter` keeps httpx2's transport when it must
honour proxy settings).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from colonnade.adapters.http_connection import HttpConnection, OriginKey, request_body, request_head

__all__ = ["ColonnadeTransport"]

_DEFAULT_PORTS = {b"http": 80, b"https": 443}
# httpx2's own transport's words: user-visible messages stay as they were before this transport
_CONNECT_FAILED = "All connection attempts failed"
_DEFAULT_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
# RFC 9110 9.2.2: only these may be sent again when it is unknown whether the server saw them
_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})


class _ResponseBody(httpx2.AsyncByteStream):
    """The body as httpx2 reads it; closing it gives the connection back to the pool (or ends it)."""

    def __init__(self, pool: ColonnadeTransport, conn: HttpConnection, read_s: float | None) -> None:
        self._pool: ColonnadeTransport | None = pool
        self._conn = conn
        self._read_s = read_s

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if self._pool is None:
            raise httpx2.StreamClosed()
        while True:
            chunk = conn.take()
            if chunk is None:
                await conn.wait(self._read_s)
            elif chunk:
                yield chunk
            else:
                return

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool._release(self._conn)


class ColonnadeTransport(httpx2.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 connections per origin, limited as `limits` says; give it to one client.

    `ssl_context` is used for https origins (httpx2's default context when None). Timeouts come
    from each request's httpx2 timeout: pool wait, connect (TLS handshake included) and each read.
    """

    def __init__(
        self, *, ssl_context: ssl.SSLContext | None = None, limits: httpx2.Limits = _DEFAULT_LIMITS
    ) -> None:
        self._ssl_context = ssl_context
        self._max_connections = limits.max_connections
        self._max_idle = limits.max_keepalive_connections
        self._expiry = limits.keepalive_expiry
        self._idle: dict[OriginKey, list[HttpConnection]] = {}
        self._idle_count = 0
        self._open = 0  # connections open or being opened: each holds one of max_connections
        self._connections: set[HttpConnection] = set()
        self._waiters: deque[tuple[OriginKey, asyncio.Future[HttpConnection | None]]] = deque()
        self._closed = False

    @property
    def open_connections(self) -> int:
        """Connections open or being opened (each counts against `max_connections`)."""
        return self._open

    @property
    def idle_connections(self) -> int:
        """Open connections waiting in the pool for the next request."""
        return self._idle_count

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        key = _key(request.url)
        timeouts: dict[str, Any] = request.extensions.get("timeout") or {}
        data = request_head(request) + await request_body(request)
        head_only = request.method == "HEAD"
        last = "close" in (token.lower() for token in request.headers.get_list("connection", True))
        read_timeout = timeouts.get("read")
        conn = await self._acquire(key, timeouts.get("pool"), timeouts.get("connect"))
        try:
            conn.send(data, head_only=head_only, last=last)
            try:
                await conn.read_head(read_timeout)
            except httpx2.TransportError:
                if self._closed or not (
                    conn.reused and conn.closed and not conn.started and _replayable(request, conn)
                ):
                    raise
                # the server closed this idle connection as we wrote: once more, on a fresh one
                conn = await self._reconnect(conn, timeouts.get("connect"))
                conn.send(data, head_only=head_only, last=last)
                await conn.read_head(read_timeout)
        except BaseException:
            self._discard(conn)
            raise
        return httpx2.Response(
            conn.status,
            headers=conn.headers,
            stream=_ResponseBody(self, conn, read_timeout),
            extensions={"http_version": conn.version, "reason_phrase": conn.reason},
        )

    async def aclose(self) -> None:
        """Close every connection; requests still in flight fail with a transport error."""
        self._closed = True
        for conn in list(self._connections):
            conn.close()
        self._idle.clear()
        self._idle_count = 0
        while self._waiters:
            _, waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(RuntimeError("the HTTP transport was closed"))

    # -- the pool

    async def _acquire(self, key: OriginKey, pool_s: float | None, connect_s: float | None) -> HttpConnection:
        """A live idle connection to `key`, else a new one; waits while all connections are busy."""
        if self._closed:
            raise RuntimeError("the HTTP transport is closed; create a new client")
        idle = self._idle.get(key)
        if idle:
            conn = self._take_idle(idle)
            if conn is not None:
                return conn
        if self._max_connections is None or self._open < self._max_connections:
            self._open += 1
        elif not self._evict_idle():
            handed = await self._wait_for_slot(key, pool_s)
            if handed is not None:
                handed.reused = True
                return handed
        try:
            conn = await self._connect(key, connect_s)
        except BaseException:
            self._free_slot()
            raise
        self._connections.add(conn)
        return conn

    def _take_idle(self, idle: list[HttpConnection]) -> HttpConnection | None:
        now = asyncio.get_running_loop().time()
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            conn.idle = False
            if conn.closed or (self._expiry is not None and now - conn.idle_since > self._expiry):
                self._discard(conn)
                continue
            conn.reused = True
            return conn
        return None

    def _evict_idle(self) -> bool:
        """Close the longest-idle connection (of any origin) so its slot serves a new one."""
        oldest: list[HttpConnection] | None = None
        for conns in self._idle.values():
            if conns and (oldest is None or conns[0].idle_since < oldest[0].idle_since):
                oldest = conns
        if oldest is None:
            return False
        conn = oldest.pop(0)
        self._idle_count -= 1
        conn.idle = False
        conn.released = True  # its slot passes to the caller
        self._connections.discard(conn)
        conn.close()
        return True

    async def _wait_for_slot(self, key: OriginKey, limit_s: float | None) -> HttpConnection | None:
        """Queue until a connection to `key` is handed over, or a slot (None) to open one in."""
        waiter: asyncio.Future[HttpConnection | None] = asyncio.get_running_loop().create_future()
        entry = (key, waiter)
        self._waiters.append(entry)
        try:
            async with asyncio.timeout(limit_s):
                return await waiter
        except BaseException as exc:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._give_back(waiter.result())  # handed over just as this call gave up
            else:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiters.remove(entry)
            if isinstance(exc, TimeoutError):
                raise httpx2.PoolTimeout(f"no free connection within {limit_s:g} s") from None
            raise

    def _give_back(self, handed: HttpConnection | None) -> None:
        if handed is None:
            self._free_slot()
        else:
            self._release(handed)

    async def _reconnect(self, stale: HttpConnection, connect_s: float | None) -> HttpConnection:
        """A fresh connection taking over the stale one's slot."""
        conn = await self._connect(stale.key, connect_s)
        stale.released = True
        self._connections.discard(stale)
        self._connections.add(conn)
        return conn

    async def _connect(self, key: OriginKey, connect_s: float | None) -> HttpConnection:
        scheme, raw_host, port = key
        host = raw_host.decode("ascii")
        context = None
        if scheme == b"https":
            if self._ssl_context is None:
                self._ssl_context = httpx2.create_ssl_context()
            context = self._ssl_context
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(connect_s):
                _, conn = await loop.create_connection(
                    lambda: HttpConnection(key, self._idle_lost),
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if context is not None else None,
                )
        except TimeoutError:
            # the kernel can time a connect out too, with no limit of ours set
            within = f" within {connect_s:g} s" if connect_s is not None else ""
            raise httpx2.ConnectTimeout(f"no connection to {host}:{port}{within}") from None
        except (ssl.SSLError, socket.gaierror) as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__) from exc
        except OSError as exc:  # refused, unreachable: the cause says which, the text is the loop's
            raise httpx2.ConnectError(_CONNECT_FAILED) from exc
        if self._closed:  # `aclose` ran while this connection was being opened
            conn.close()
            raise httpx2.ConnectError("the HTTP transport was closed while connecting")
        return conn

    def _release(self, conn: HttpConnection) -> None:
        """The body was closed: keep the connection for the next request, or end it."""
        if conn.released:
            return
        if self._closed or not conn.reusable:
            self._discard(conn)
            return
        while self._waiters:
            key, waiter = self._waiters.popleft()
            if waiter.done():
                continue
            if key == conn.key:
                waiter.set_result(conn)
            else:  # the next in line wants another origin: it gets this slot
                self._forget(conn)
                waiter.set_result(None)
            return
        if self._max_idle is not None and self._idle_count >= self._max_idle:
            self._discard(conn)
            return
        conn.idle = True
        conn.idle_since = asyncio.get_running_loop().time()
        self._idle.setdefault(conn.key, []).append(conn)
        self._idle_count += 1

    def _idle_lost(self, conn: HttpConnection) -> None:
        """An idle connection was closed by the server: drop it and free its slot."""
        conns = self._idle.get(conn.key)
        if conns is not None and conn in conns:
            conns.remove(conn)
            self._idle_count -= 1
        conn.idle = False
        self._discard(conn)

    def _discard(self, conn: HttpConnection) -> None:
        """End the connection and give its slot to the next waiter."""
        if conn.released:
            return
        self._forget(conn)
        self._free_slot()

    def _forget(self, conn: HttpConnection) -> None:
        conn.released = True
        self._connections.discard(conn)
        conn.close()

    def _free_slot(self) -> None:
        while self._waiters:
            _, waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes to the waiter
                return
        self._open -= 1


def _replayable(request: httpx2.Request, conn: HttpConnection) -> bool:
    """Whether sending the request again cannot repeat an effect the server may already have made."""
    return not conn.written or request.method in _IDEMPOTENT_METHODS or "idempotency-key" in request.headers


def _key(url: httpx2.URL) -> OriginKey:
    scheme = url.raw_scheme
    default = _DEFAULT_PORTS.get(scheme)
    if default is None:
        raise httpx2.UnsupportedProtocol(
            f"the URL scheme {scheme.decode('ascii', 'replace')!r} is not supported; use http or https"
        )
    return scheme, url.raw_host, url.port or default
