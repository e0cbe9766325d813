"""One keep-alive HTTP/1.1 connection to a backend: writes a request, parses its answer.

The asyncio protocol half of `ColonnadeTransport` (the pool lives in `http_transport.py`). Each
request is written in one piece (`request_head` + `request_body`, exactly as httpx2 prepared it)
and httptools (llhttp, in C) parses the answer; the body is buffered with flow control so a slow
reader stops the socket being read. Failures surface as the httpx2 exceptions the adapter's outcome
mapping knows.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import cast

import httptools
import httpx2

__all__ = ["HttpConnection", "OriginKey", "request_body", "request_head"]

OriginKey = tuple[bytes, bytes, int]
"""scheme, host, port: the connections of one key are interchangeable."""

_HIGH_WATER = 256 * 1024  # buffered body bytes before the socket stops being read
_VERSIONS = {"1.1": b"HTTP/1.1", "1.0": b"HTTP/1.0"}
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch
_FIELD_VALUE = re.compile(rb"[^\x00\r\n]*").fullmatch


class HttpConnection(asyncio.Protocol):
    """One TCP (or TLS) connection: sends a request, parses its answer, buffers the body.

    The protocol callbacks fill the state; the request's task reads it (`read_head`, `take`,
    `wait`). A fresh parser per request keeps a confused answer from leaking into the next one.
    """

    def __init__(self, key: OriginKey, on_idle_lost: Callable[[HttpConnection], None]) -> None:
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
        self._last = False  # the request said `Connection: close`: nothing may follow it here
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

    def send(self, data: bytes, *, head_only: bool, last: bool = False) -> None:
        """Write one request; its answer is then read with `read_head` and `take`/`wait`.

        `last`: the request carries `Connection: close`, so the connection is not kept after it
        (RFC 9112 9.6), whatever the answer says.
        """
        self._parser = httptools.HttpResponseParser(self)
        self._head_only, self._last = head_only, last
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
        """End the connection; an answer still being read fails, since this close is ours and
        not the server's end of a body without length."""
        self._keep_alive = False
        if self._parser is not None and not self._complete:
            self._fail(httpx2.ReadError("the connection was closed before its answer was complete"))
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
        if self.status:
            return  # a trailer field after a chunked body: not one of the answer's headers
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
        self._keep_alive = parser.should_keep_alive() and not self._last
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


def request_head(request: httpx2.Request) -> bytes:
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


async def request_body(request: httpx2.Request) -> bytes:
    """The whole body; a streamed one (sent chunked, as httpx2 announced) is read first."""
    try:
        return request.content
    except httpx2.RequestNotRead:
        content = await request.aread()
    if not request.headers.get("transfer-encoding", "").lower().endswith("chunked"):
        return content
    return (b"%x\r\n%s\r\n" % (len(content), content) if content else b"") + b"0\r\n\r\n"
