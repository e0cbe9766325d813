"""A pooled HTTP/1.1 transport for `httpx2.AsyncClient` on asyncio and httptools.

httpx2's own transport (httpcore2 + h11, pure Python) costs the gateway about half a millisecond
of CPU per backend request. This one writes each request in one piece and lets httptools (llhttp,
in C) parse the answer, so the adapter keeps httpx2's client API and pays mostly for the socket.
It keeps a keep-alive pool that honours `httpx2.Limits`, streams response bodies with flow
control, retries a request once when a reused idle connection turns out to be closed (only when
resending cannot repeat an effect: idempotent method, `Idempotency-Key`, or nothing written), and raises
the httpx2 exceptions the adapter's outcome mapping knows. HTTP/1.1 only: no HTTP/2, proxies or
protocol upgrades (`HttpAdapter` keeps httpx2's transport when it must honour proxy settings).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import httptools
import httpx2

__all__ = ["ColonnadeTransport"]

_HIGH_WATER = 256 * 1024  # buffered body bytes before the socket stops being read
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
_VERSIONS = {"1.1": b"HTTP/1.1", "1.0": b"HTTP/1.0"}
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch
_FIELD_VALUE = re.compile(rb"[^\x00\r\n]*").fullmatch
# httpx2's own transport's words: user-visible messages stay as they were before this transport
_CONNECT_FAILED = "All connection attempts failed"
_DEFAULT_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
# RFC 9110 9.2.2: only these may be sent again when it is unknown whether the server saw them
_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

_Key = tuple[bytes, bytes, int]  # scheme, host, port


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection: sends a request, parses its answer, buffers the body.

    The protocol callbacks fill the state; the request's task reads it (`read_head`, `take`,
    `wait`). A fresh parser per request keeps a confused answer from leaking into the next one.
    """

    def __init__(self, key: _Key, on_idle_lost: Callable[[_Connection], None]) -> None:
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle = False
        self.idle_since = 0.0
        self.reused = False
        self.released = False  # its pool slot was given back
        self._on_idle_lost = on_idle_lost
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._head_only = False
        self._interim = False
        self._framed = False
        self.started = False  # a byte of the answer arrived
        self.written = False  # the request reached the socket (the server may have seen it)
        self.status = 0
        self.reason = b""
        self.version = b"HTTP/1.1"
        self.headers: list[tuple[bytes, bytes]] = []
        self._keep_alive = False
        self._complete = False
        self._error: Exception | None = None
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._paused = False

    # -- the request's side

    def send(self, data: bytes, *, head_only: bool) -> None:
        """Write one request; its answer is then read with `read_head` and `take`/`wait`."""
        self._parser = httptools.HttpResponseParser(self)
        self._head_only = head_only
        self._interim = self._framed = self.started = self._complete = self._keep_alive = False
        self.written = False
        self.status, self.reason, self.headers, self._error = 0, b"", [], None
        transport = self.transport
        if self.closed or transport is None or transport.is_closing():
            self.closed = True
            self._error = httpx2.RemoteProtocolError("the connection was closed before the request was sent")
            return
        try:
            transport.write(data)
            self.written = True
        except (OSError, RuntimeError) as exc:  # uvloop refuses writes to a transport it has closed
            self.closed = True
            self._error = httpx2.WriteError(str(exc) or type(exc).__name__)
            self._error.__cause__ = exc
            self.close()

    async def read_head(self, limit_s: float | None) -> None:
        """Wait for the status line and headers (1xx interim answers are skipped)."""
        while not self.status:
            if self._error is not None:
                raise self._error
            await self.wait(limit_s)

    def take(self) -> bytes | None:
        """Buffered body bytes, b"" at the end of the body, None when the caller must `wait`."""
        chunks = self._chunks
        if chunks:
            self._chunks, self._buffered = [], 0
            if self._paused and not self.closed and self.transport is not None:
                self._paused = False
                self.transport.resume_reading()
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if self._error is not None:
            raise self._error
        return b"" if self._complete else None

    async def wait(self, limit_s: float | None) -> None:
        """Until the protocol has news (head, body, end or error); ReadTimeout after `limit_s`."""
        waiter = self._waiter = self._loop.create_future()
        if limit_s is None:
            await waiter
            return
        timer = self._loop.call_later(limit_s, _expire, waiter, limit_s)
        try:
            await waiter
        finally:
            timer.cancel()

    @property
    def reusable(self) -> bool:
        """The answer was read to its end, nothing unexpected came, and both sides keep it open."""
        return (
            self._complete
            and self._keep_alive
            and self._error is None
            and not self._chunks
            and not self.closed
        )

    def close(self) -> None:
        self._keep_alive = False
        if self.transport is not None:
            self.transport.close()

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        parser = self._parser
        if parser is None:  # nothing was asked: a server talking out of turn cannot be trusted
            self._keep_alive = False
            if self.idle:
                self.close()
            return
        self.started = True
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._keep_alive = False  # 101: the connection now speaks another protocol
        except httptools.HttpParserError as exc:
            if self._complete:
                self._keep_alive = False  # bytes after a complete answer: do not reuse
            else:
                self._fail(httpx2.RemoteProtocolError(f"the server sent a malformed HTTP response ({exc})"))
            self.close()

    def eof_received(self) -> bool | None:
        self.closed = True  # the peer is done: never hand this connection out again
        self._keep_alive = False
        return None  # let the transport close; connection_lost settles the answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._keep_alive = False
        if self.idle:
            self._on_idle_lost(self)
            return
        if self._parser is None or self._complete:
            return
        if self.status and not self._framed and not self._interim and exc is None:
            self._finish()  # a body without Content-Length or chunking ends where the connection does
        elif exc is not None:
            error: Exception = httpx2.ReadError(str(exc) or type(exc).__name__)
            error.__cause__ = exc
            self._fail(error)
        elif self.status:
            self._fail(
                httpx2.RemoteProtocolError("the server closed the connection in the middle of the body")
            )
        else:
            self._fail(
                httpx2.RemoteProtocolError("the server closed the connection without sending a response")
            )

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        if self._complete:
            self._keep_alive = False
            return
        self.headers, self.reason, self._framed = [], b"", False

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))
        if len(name) == 14 and name.lower() == b"content-length":
            self._framed = True
        elif len(name) == 17 and name.lower() == b"transfer-encoding":
            self._framed = value.rstrip().lower().endswith(b"chunked")

    def on_headers_complete(self) -> None:
        parser = self._parser
        if parser is None or self._complete:
            return
        status = parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            self._interim = True
            return
        self.status = status
        self.version = _VERSIONS.get(parser.get_http_version(), b"HTTP/1.1")
        self._keep_alive = parser.should_keep_alive()
        if self._head_only or status == 101:
            self._finish()
        else:
            self._wake()

    def on_body(self, body: bytes) -> None:
        if self._complete:
            self._keep_alive = False  # a body where none belongs (e.g. after HEAD)
            return
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
        elif not self._complete:
            self._finish()

    # -- internals

    def _finish(self) -> None:
        self._complete = True
        self._parser = None
        self._wake()

    def _fail(self, error: Exception) -> None:
        if self._error is None:
            self._error = error
        self._keep_alive = False
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)


def _expire(waiter: asyncio.Future[None], timeout: float) -> None:
    if not waiter.done():
        waiter.set_exception(httpx2.ReadTimeout(f"no data from the server within {timeout:g} s"))


class _ResponseBody(httpx2.AsyncByteStream):
    """The body as httpx2 reads it; closing it gives the connection back to the pool (or ends it)."""

    def __init__(self, pool: ColonnadeTransport, conn: _Connection, read_s: float | None) -> None:
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
        self._idle: dict[_Key, list[_Connection]] = {}
        self._idle_count = 0
        self._open = 0  # connections open or being opened: each holds one of max_connections
        self._connections: set[_Connection] = set()
        self._waiters: deque[tuple[_Key, asyncio.Future[_Connection | None]]] = deque()
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
        data = _request_head(request) + await _request_body(request)
        head_only = request.method == "HEAD"
        read_timeout = timeouts.get("read")
        conn = await self._acquire(key, timeouts.get("pool"), timeouts.get("connect"))
        try:
            conn.send(data, head_only=head_only)
            try:
                await conn.read_head(read_timeout)
            except httpx2.TransportError:
                if not (conn.reused and conn.closed and not conn.started and _replayable(request, conn)):
                    raise
                # the server closed this idle connection as we wrote: once more, on a fresh one
                conn = await self._reconnect(conn, timeouts.get("connect"))
                conn.send(data, head_only=head_only)
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

    async def _acquire(self, key: _Key, pool_s: float | None, connect_s: float | None) -> _Connection:
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

    def _take_idle(self, idle: list[_Connection]) -> _Connection | None:
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
        oldest: list[_Connection] | None = None
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

    async def _wait_for_slot(self, key: _Key, limit_s: float | None) -> _Connection | None:
        """Queue until a connection to `key` is handed over, or a slot (None) to open one in."""
        waiter: asyncio.Future[_Connection | None] = asyncio.get_running_loop().create_future()
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

    def _give_back(self, handed: _Connection | None) -> None:
        if handed is None:
            self._free_slot()
        else:
            self._release(handed)

    async def _reconnect(self, stale: _Connection, connect_s: float | None) -> _Connection:
        """A fresh connection taking over the stale one's slot."""
        conn = await self._connect(stale.key, connect_s)
        stale.released = True
        self._connections.discard(stale)
        self._connections.add(conn)
        return conn

    async def _connect(self, key: _Key, connect_s: float | None) -> _Connection:
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
                    lambda: _Connection(key, self._idle_lost),
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if context is not None else None,
                )
        except TimeoutError:
            raise httpx2.ConnectTimeout(f"no connection to {host}:{port} within {connect_s:g} s") from None
        except (ssl.SSLError, socket.gaierror) as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__) from exc
        except OSError as exc:  # refused, unreachable: the cause says which, the text is the loop's
            raise httpx2.ConnectError(_CONNECT_FAILED) from exc
        return conn

    def _release(self, conn: _Connection) -> None:
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

    def _idle_lost(self, conn: _Connection) -> None:
        """An idle connection was closed by the server: drop it and free its slot."""
        conns = self._idle.get(conn.key)
        if conns is not None and conn in conns:
            conns.remove(conn)
            self._idle_count -= 1
        conn.idle = False
        self._discard(conn)

    def _discard(self, conn: _Connection) -> None:
        """End the connection and give its slot to the next waiter."""
        if conn.released:
            return
        self._forget(conn)
        self._free_slot()

    def _forget(self, conn: _Connection) -> None:
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


def _replayable(request: httpx2.Request, conn: _Connection) -> bool:
    """Whether sending the request again cannot repeat an effect the server may already have made."""
    return not conn.written or request.method in _IDEMPOTENT_METHODS or "idempotency-key" in request.headers


def _key(url: httpx2.URL) -> _Key:
    scheme = url.raw_scheme
    default = _DEFAULT_PORTS.get(scheme)
    if default is None:
        raise httpx2.UnsupportedProtocol(
            f"the URL scheme {scheme.decode('ascii', 'replace')!r} is not supported; use http or https"
        )
    return scheme, url.raw_host, url.port or default


def _request_head(request: httpx2.Request) -> bytes:
    """Request line and headers exactly as httpx2 prepared them (Host included)."""
    method = request.method.encode("ascii")
    if not _TOKEN(method):
        raise httpx2.LocalProtocolError(f"the method {request.method!r} is not a valid HTTP method")
    parts = [method, b" ", request.url.raw_path or b"/", b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        if not (_TOKEN(name) and _FIELD_VALUE(value)):
            raise httpx2.LocalProtocolError(
                f"the header {name!r} cannot be sent: names are tokens, values carry no CR, LF or NUL"
            )
        parts += (name, b": ", value, b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


async def _request_body(request: httpx2.Request) -> bytes:
    """The whole body; a streamed one (sent chunked, as httpx2 announced) is read first."""
    try:
        return request.content
    except httpx2.RequestNotRead:
        content = await request.aread()
    if not request.headers.get("transfer-encoding", "").lower().endswith("chunked"):
        return content
    return (b"%x\r\n%s\r\n" % (len(content), content) if content else b"") + b"0\r\n\r\n"
