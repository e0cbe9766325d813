"""The connection's writes of one event-loop turn go out as one (uvicorn writes a head, then a body)."""

from __future__ import annotations

import asyncio
import socket

from colonnade.cli._http_protocol import _CoalescedWrites


class _Recorder(asyncio.Protocol):
    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)


async def test_writes_of_one_turn_are_one_send_and_close_sends_what_is_pending() -> None:
    loop = asyncio.get_running_loop()
    left, right = socket.socketpair()
    transport, _ = await loop.create_connection(asyncio.Protocol, sock=left)
    peer_transport, peer = await loop.create_connection(_Recorder, sock=right)
    sent: list[bytes] = []
    real_write = transport.write
    transport.write = lambda data: (sent.append(bytes(data)), real_write(data))  # type: ignore[method-assign]
    coalesced = _CoalescedWrites(transport, loop)  # type: ignore[arg-type]

    coalesced.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    coalesced.write(b"ok")
    assert sent == []  # nothing leaves before the turn ends
    assert coalesced.get_write_buffer_size() == len(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
    await asyncio.sleep(0)
    assert sent == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]

    coalesced.write(b"bye")
    coalesced.close()  # pending bytes go out before the close
    for _ in range(50):
        if b"".join(peer.chunks).endswith(b"bye"):
            break
        await asyncio.sleep(0.01)
    assert b"".join(peer.chunks) == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokbye"
    assert coalesced.is_closing()  # everything else is the real transport's
    peer_transport.close()
