"""uvicorn's httptools protocol plus what it lacks: header/body read deadlines, header size, connections.

uvicorn times out only idle keep-alive connections (`timeout_keep_alive`), and only after they have
answered a request: a connection that never sends a byte, drips its headers a line at a time, or
announces a body it never sends is held forever, and httptools buffers headers of any size. Each
connection here has one timer: from its opening (or the first byte of its next request) to the end
of a request's headers, then from there to the end of the body. A stalled client gets `408` and is
disconnected; a connection over the open-connection bound gets `503` with `Retry-After` and is
closed at once. Each request's scope gets the moment its first byte was read (`RECEIVED_AT`), from
which admission control counts the time it waited, and the load monitor counts it as waiting
until its handling starts. The answers carry the gateway's error body
(`{"error": {code, message, details, fix}}`).

On a TLS connection each request's scope also carries the ASGI TLS extension, built once per
connection (`_tls_extension`): the client certificate and its `x5t#S256` thumbprint, which uvicorn
does not pass to the app.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from colonnade.calls.call_errors import error
from colonnade.calls.load import READ_MARK, RECEIVED_AT, LoadMonitor
from colonnade.cli._tls_extension import tls_extension

__all__ = ["ConnectionLimits", "GuardedHttpToolsProtocol", "guarded_protocol"]

logger = logging.getLogger("colonnade.gateway")

RETRY_AFTER_S = 1


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 1000
    max_header_bytes: int = 64 * 1024


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """One instance per connection; `limits` is set on the subclass `guarded_protocol` makes."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    load: ClassVar[LoadMonitor | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: asyncio.TimerHandle | None = None
        self._in_headers = True  # waiting for (the rest of) a request line and headers
        self._header_bytes = 0
        self._tail = b""  # the last bytes of the headers so far: a blank line may span two reads
        self._tls: dict[str, Any] | None = None  # the ASGI TLS extension, the same for every request

    # -- the connection --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_CoalescedWrites(transport, self.loop))  # type: ignore[arg-type]
        if len(self.connections) > self.limits.max_connections:
            self._refuse(
                503,
                "R-CAP-CONNECTIONS",
                f"the gateway already holds {self.limits.max_connections} connections",
                retry_after_ms=RETRY_AFTER_S * 1000,
                limit=self.limits.max_connections,
            )
            return
        self._tls = tls_extension(transport)
        self._arm("headers", self.limits.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_headers:  # counted before the parser buffers them, up to the blank line
            self._header_bytes += _header_part(self._tail, data)
            self._tail = (self._tail + data)[-3:]
            if self._header_bytes > self.limits.max_header_bytes:
                self._refuse(
                    431,
                    "I-REQ-HEADERS-TOO-LARGE",
                    f"the request line and headers exceed {self.limits.max_header_bytes} bytes",
                    limit_bytes=self.limits.max_header_bytes,
                )
                return
        super().data_received(data)

    # -- parser callbacks: one timer, re-armed at each phase ------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # When the request's first byte was read: admission counts the wait from here (`calls/load.py`).
        self.scope["state"][RECEIVED_AT] = time.perf_counter()
        if self._tls is not None:
            self.scope["extensions"] = {"tls": self._tls}  # type: ignore[dict-item]
        if self._read_timer is None:  # the keep-alive wait ended with this request's first byte
            self._arm("headers", self.limits.header_timeout_s)

    def on_headers_complete(self) -> None:
        self._in_headers = False
        self._header_bytes, self._tail = 0, b""
        self._arm("body", self.limits.body_timeout_s)
        super().on_headers_complete()
        cycle = self.cycle
        if self.load is not None and cycle is not None and cycle.scope is self.scope:  # its task will run
            self.load.request_read()
            self.scope["state"][READ_MARK] = True

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_headers = True
        super().on_message_complete()

    # -- timers and refusals --------------------------------------------------------------------

    def _arm(self, phase: str, seconds: float) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(seconds, self._read_timed_out, phase, seconds)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_timed_out(self, phase: str, seconds: float) -> None:
        self._read_timer = None
        logger.info("closing a connection whose request %s did not arrive within %s s", phase, seconds)
        if phase == "body" and self.cycle is not None and self.cycle.response_started:
            self.transport.close()  # answered without waiting for the body: nothing more to say
            return
        self._refuse(
            408,
            "I-REQ-READ-TIMEOUT",
            f"the request {phase} did not arrive within {seconds:g} s",
            phase=phase,
            limit_s=seconds,
        )

    def _refuse(self, status: int, code: str, message: str, **details: Any) -> None:
        """Answer with the gateway's error body, unless an answer is already under way, and close."""
        self._disarm()
        self._in_headers = False
        if self.transport.is_closing():
            return
        cycle = self.cycle
        answering = cycle is not None and cycle.response_started and not cycle.response_complete
        if not answering:
            self.transport.write(_response(status, code, message, details))
        self.transport.close()


class _CoalescedWrites:
    """The connection's transport, with the writes of one event-loop turn sent as one.

    uvicorn writes a response's head and its body separately, and each write is a system call
    that wakes the peer; joined, a plain response costs one. Nothing waits longer than the end of
    the current turn of the loop, and closing sends what is pending first.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(chunk) for chunk in self._pending)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _header_part(tail: bytes, data: bytes) -> int:
    """How many bytes of `data` belong to the headers: up to their blank line, or all of them."""
    end = (tail + data).find(b"\r\n\r\n")
    return len(data) if end < 0 else max(0, end + 4 - len(tail))


def guarded_protocol(
    limits: ConnectionLimits, load: LoadMonitor | None = None
) -> type[GuardedHttpToolsProtocol]:
    """The protocol class to hand uvicorn (`Config(http=...)`), bound to these limits; with `load`,
    it counts the requests it has read whose handling has not started yet."""
    return type("GuardedHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"limits": limits, "load": load})


def _response(status: int, code: str, message: str, details: dict[str, Any]) -> bytes:
    _, err = error(code, message, **details)
    body = json.dumps({"error": err.model_dump()}, separators=(",", ":")).encode()
    reason = {408: "Request Timeout", 431: "Request Header Fields Too Large", 503: "Service Unavailable"}
    head = [
        f"HTTP/1.1 {status} {reason.get(status, '')}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    if "retry_after_ms" in details:
        head.append(f"retry-after: {max(1, round(details['retry_after_ms'] / 1000))}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body
