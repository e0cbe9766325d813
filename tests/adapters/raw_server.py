"""A scripted raw HTTP/1.1 server on the test's own event loop, for answers no framework would give.

It reads each request (head and Content-Length body) and hands it to an `Answer`, which writes
whatever bytes it likes and says whether the connection stays open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Self

__all__ = ["OK", "Answer", "Exchange", "RawServer", "reply"]

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@dataclass
class Exchange:
    """One request as it arrived on the wire, and the number of the connection that carried it."""

    connection: int
    head: bytes
    body: bytes

    @property
    def target(self) -> bytes:
        return self.head.split(b" ", 2)[1]


Answer = Callable[[Exchange, asyncio.StreamWriter], Awaitable[bool]]


@dataclass
class RawServer:
    """Reads each request; `answer` writes the reply and says whether the connection stays open."""

    answer: Answer
    connections: int = 0
    eofs: int = 0  # connections the client closed while the server waited for a request
    exchanges: list[Exchange] = field(default_factory=list)
    url: str = ""
    _server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    self.eofs += 1
                    return
                length = _content_length(head)
                body = await reader.readexactly(length) if length else b""
                exchange = Exchange(number, head, body)
                self.exchanges.append(exchange)
                if not await self.answer(exchange, writer):
                    return
        except ConnectionError:
            return
        finally:
            writer.close()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def reply(raw: bytes, keep_open: bool = True) -> Answer:
    """Always answer with these exact bytes."""

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(raw)
        await writer.drain()
        return keep_open

    return answer
