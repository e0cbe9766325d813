"""ColonnadeTransport under httpx2.AsyncClient, against real loopback servers, on asyncio and uvloop.

Three kinds of server: the adapter suite's uvicorn backend (`backend_url`), a scripted raw HTTP
server on the test's own event loop for the edge cases a framework would not produce, and uvicorn
over TLS with a certificate made for the test.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

import httpx2
import pytest
import uvloop
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http_transport import ColonnadeTransport
from colonnade.adapters.outcome import MALFORMED, MISCONFIGURED, OutcomeKind
from colonnade.catalog.http_binding import HttpBinding
from tests.adapters.conftest import backend_app
from tests.support.loopback import serve_in_thread

T = TypeVar("T")
Run = Callable[[Callable[[], Awaitable[T]]], T]


@pytest.fixture(
    params=[
        pytest.param(asyncio.new_event_loop, id="asyncio"),
        pytest.param(uvloop.new_event_loop, id="uvloop"),  # what `colonnade serve` runs on
    ]
)
def run(request: pytest.FixtureRequest) -> Run[Any]:
    """Run a test's scenario on a fresh event loop of each kind."""

    def run_on_loop(main: Callable[[], Awaitable[Any]]) -> Any:
        with asyncio.Runner(loop_factory=request.param) as runner:
            return runner.run(main())

    return run_on_loop


def client(
    limits: httpx2.Limits | None = None, ssl_context: ssl.SSLContext | None = None
) -> tuple[httpx2.AsyncClient, ColonnadeTransport]:
    transport = ColonnadeTransport(
        ssl_context=ssl_context,
        limits=limits or httpx2.Limits(max_connections=10, max_keepalive_connections=10),
    )
    return httpx2.AsyncClient(transport=transport, timeout=5), transport


# -- a scripted raw server on the test's loop


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
    sent: int = 0  # body bytes an answer wrote (for flow control)
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
                except (asyncio.IncompleteReadError, ConnectionError):
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


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


# -- keep-alive and the pool


def test_sequential_requests_reuse_one_connection(run: Run[Any], backend_url: str) -> None:
    async def main() -> set[int]:
        http, _ = client()
        async with http:
            return {(await http.get(f"{backend_url}/echo/{i}")).json()["client_port"] for i in range(5)}

    assert len(run(main)) == 1


def test_concurrent_requests_wait_for_the_connection_limit(run: Run[Any], backend_url: str) -> None:
    async def main() -> tuple[list[int], int]:
        http, transport = client(httpx2.Limits(max_connections=2, max_keepalive_connections=2))
        peak = 0

        async def one() -> int:
            nonlocal peak
            response = await http.get(f"{backend_url}/slow", params={"seconds": 0.1})
            peak = max(peak, transport.open_connections)
            assert response.status_code == 200
            port: int = response.json()["client_port"]
            return port

        async with http:
            ports = await asyncio.gather(*(one() for _ in range(6)))
        return ports, peak

    ports, peak = run(main)

    assert len(set(ports)) == 2
    assert peak == 2


def test_only_max_keepalive_connections_stay_idle(run: Run[Any], backend_url: str) -> None:
    async def main() -> tuple[int, int, int]:
        http, transport = client(httpx2.Limits(max_connections=5, max_keepalive_connections=1))
        async with http:
            slow = [http.get(f"{backend_url}/slow", params={"seconds": 0.1}) for _ in range(3)]
            ports = {r.json()["client_port"] for r in await asyncio.gather(*slow)}
            idle = transport.idle_connections
            again = (await http.get(f"{backend_url}/echo/x")).json()["client_port"]
            return len(ports), idle, again in ports

    connections, idle, reused = run(main)

    assert connections == 3
    assert idle == 1
    assert reused


def test_connections_idle_longer_than_keepalive_expiry_are_not_reused(
    run: Run[Any], backend_url: str
) -> None:
    async def main() -> tuple[int, int]:
        http, _ = client(httpx2.Limits(max_connections=5, keepalive_expiry=0.1))
        async with http:
            first = (await http.get(f"{backend_url}/echo/x")).json()["client_port"]
            await asyncio.sleep(0.3)
            second = (await http.get(f"{backend_url}/echo/x")).json()["client_port"]
        return first, second

    first, second = run(main)

    assert first != second


def test_waiting_longer_than_the_pool_timeout_raises_pool_timeout(run: Run[Any], backend_url: str) -> None:
    async def main() -> None:
        http, transport = client(httpx2.Limits(max_connections=1))
        async with http:
            busy = asyncio.create_task(http.get(f"{backend_url}/slow", params={"seconds": 0.5}))
            await asyncio.sleep(0.1)
            with pytest.raises(httpx2.PoolTimeout):
                await http.get(f"{backend_url}/echo/x", timeout=httpx2.Timeout(5, pool=0.1))
            assert (await busy).status_code == 200
            assert (await http.get(f"{backend_url}/echo/x")).status_code == 200
            assert transport.open_connections == 1

    run(main)


def test_idle_connection_the_server_closed_is_not_reused(run: Run[Any]) -> None:
    async def close_soon(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK)
        await writer.drain()
        await asyncio.sleep(0.05)
        return False  # the server ends the idle connection

    async def main() -> tuple[list[int], int]:
        async with RawServer(close_soon) as server:
            http, transport = client()
            async with http:
                await http.get(server.url)
                await asyncio.sleep(0.2)
                idle_after_close = transport.idle_connections
                assert (await http.get(server.url)).text == "ok"
            return [e.connection for e in server.exchanges], idle_after_close

    connections, idle = run(main)

    assert idle == 0
    assert connections == [1, 2]  # no request was written to the closed connection


@pytest.mark.parametrize(
    ("method", "headers", "retried"),
    [
        ("GET", {}, True),
        ("PUT", {}, True),
        ("POST", {"Idempotency-Key": "k-1"}, True),
        ("POST", {}, False),  # the server may have acted on it: the pipeline's retry stage decides
        ("PATCH", {}, False),
    ],
)
def test_request_on_a_connection_the_server_just_closed_is_retried_once_when_safe(
    run: Run[Any], method: str, headers: dict[str, str], retried: bool
) -> None:
    async def drop_second_request(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.connection == 1 and len(server.exchanges) == 2:
            return False  # closed without a byte of answer, as a server timing out an idle connection
        writer.write(OK)
        await writer.drain()
        return True

    server = RawServer(drop_second_request)

    async def main() -> list[tuple[int, bytes]]:
        async with server:
            http, _ = client()
            async with http:
                await http.get(server.url + "/one")
                if retried:
                    response = await http.request(method, server.url + "/two", json={"n": 2}, headers=headers)
                    assert response.text == "ok"
                else:
                    with pytest.raises(httpx2.RemoteProtocolError, match="without sending a response"):
                        await http.request(method, server.url + "/two", json={"n": 2}, headers=headers)
            return [(e.connection, e.target) for e in server.exchanges]

    expected = [(1, b"/one"), (1, b"/two")] + ([(2, b"/two")] if retried else [])
    assert run(main) == expected


def test_a_post_nothing_was_written_for_is_sent_on_a_fresh_connection(run: Run[Any]) -> None:
    """A pooled connection already closing when the request is written: the server never saw it."""
    server = RawServer(reply(OK))

    async def main() -> tuple[list[tuple[int, bytes]], str]:
        async with server:
            http, transport = client()
            async with http:
                await http.get(server.url + "/one")
                (idle,) = [conn for conns in transport._idle.values() for conn in conns]
                assert idle.transport is not None
                idle.transport.close()  # closing, and the loop has not yet said so to the protocol
                response = await http.post(server.url + "/two", json={"n": 2})
            return [(e.connection, e.target) for e in server.exchanges], response.text

    exchanges, text = run(main)

    assert text == "ok"
    assert exchanges == [(1, b"/one"), (2, b"/two")]  # the POST reached the server once


def test_a_fresh_connection_closed_without_an_answer_is_not_retried(run: Run[Any]) -> None:
    async def answer_first_only(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if len(server.exchanges) == 1:
            writer.write(OK)
            await writer.drain()
            return True
        return False

    server = RawServer(answer_first_only)

    async def main() -> list[int]:
        async with server:
            http, _ = client()
            async with http:
                await http.get(server.url)
                with pytest.raises(httpx2.RemoteProtocolError, match="without sending a response"):
                    await http.get(server.url)
            return [e.connection for e in server.exchanges]

    assert run(main) == [1, 1, 2]  # the retry on connection 2 failed too: no third attempt


def test_no_retry_once_a_byte_of_the_answer_arrived(run: Run[Any]) -> None:
    async def half_an_answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK if len(server.exchanges) == 1 else b"HTTP/1.1 200 OK\r\nContent-Le")
        await writer.drain()
        return len(server.exchanges) == 1

    server = RawServer(half_an_answer)

    async def main() -> int:
        async with server:
            http, _ = client()
            async with http:
                await http.get(server.url)
                with pytest.raises(httpx2.RemoteProtocolError):
                    await http.get(server.url)
            return len(server.exchanges)

    assert run(main) == 2


@pytest.mark.parametrize(
    ("answer", "reused"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", False),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", True),
        (OK, True),
    ],
    ids=["connection-close", "http1.0", "http1.0-keep-alive", "http1.1"],
)
def test_the_answer_decides_whether_the_connection_is_kept(
    run: Run[Any], answer: bytes, reused: bool
) -> None:
    async def main() -> tuple[list[int], str, int]:
        async with RawServer(reply(answer)) as server:
            http, transport = client()
            async with http:
                first = await http.get(server.url)
                idle = transport.idle_connections
                await http.get(server.url)
            return [e.connection for e in server.exchanges], first.http_version, idle

    connections, version, idle = run(main)

    assert connections == ([1, 1] if reused else [1, 2])
    assert idle == (1 if reused else 0)
    assert version == answer.split(b" ")[0].decode()


def test_a_request_that_asked_to_close_its_connection_is_not_followed_by_another_on_it(
    run: Run[Any],
) -> None:
    """RFC 9112 9.6: a client that sent `Connection: close` sends nothing more on that connection,
    even when the server's answer does not repeat it."""

    async def main() -> tuple[list[int], int]:
        async with RawServer(reply(OK)) as server:
            http, transport = client()
            async with http:
                await http.get(server.url, headers={"Connection": "close"})
                idle = transport.idle_connections
                await http.get(server.url)
            return [e.connection for e in server.exchanges], idle

    assert run(main) == ([1, 2], 0)


# -- response framing and headers


async def _twice(answer: Answer) -> tuple[str, list[int]]:
    """The first answer's text, and which connection carried each of two requests."""
    async with RawServer(answer) as server:
        http, _ = client()
        async with http:
            text = (await http.get(server.url)).text
            await http.get(server.url)
        return text, [e.connection for e in server.exchanges]


def in_two_writes(first: bytes, second: bytes, *, keep_open: bool) -> Answer:
    """Answer in two writes with a pause between them, so the client sees two reads."""

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        for part in (first, second):
            writer.write(part)
            await writer.drain()
            await asyncio.sleep(0.02)
        return keep_open

    return answer


def test_chunked_body_split_across_writes(run: Run[Any]) -> None:
    chunked = in_two_writes(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        b"lo\r\n7\r\n, world\r\n0\r\n\r\n",
        keep_open=True,
    )
    assert run(lambda: _twice(chunked)) == ("hello, world", [1, 1])


@dataclass(frozen=True)
class Framed:
    """One answer as the server frames it, and what the client must make of it."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    chunked: bool
    chunk_sizes: tuple[int, ...]

    def wire(self) -> bytes:
        lines = [f"HTTP/1.1 {self.status} Whatever".encode()]
        lines += [f"{name}: {value}".encode() for name, value in self.headers]
        if not self.chunked:
            lines.append(f"Content-Length: {len(self.body)}".encode())
            return b"\r\n".join(lines) + b"\r\n\r\n" + self.body
        lines.append(b"Transfer-Encoding: chunked")
        out, rest, sizes = [b"\r\n".join(lines) + b"\r\n\r\n"], self.body, list(self.chunk_sizes)
        while rest:
            size = max(1, min(len(rest), sizes.pop() if sizes else len(rest)))
            out.append(b"%x\r\n%s\r\n" % (size, rest[:size]))
            rest = rest[size:]
        out.append(b"0\r\n\r\n")
        return b"".join(out)


FRAMED = st.builds(
    Framed,
    status=st.sampled_from([200, 201, 202, 400, 404, 409, 429, 500, 503]),
    headers=st.lists(
        st.tuples(st.sampled_from(["X-Trace", "Content-Type", "Retry-After", "Set-Cookie"]),
                  st.text(alphabet="abcdefghij0123456789 =;/-", min_size=1, max_size=30).map(str.strip)
                  .filter(bool)),
        max_size=4,
    ).map(tuple),
    body=st.binary(max_size=3000),
    chunked=st.booleans(),
    chunk_sizes=st.lists(st.integers(min_value=1, max_value=700), max_size=8).map(tuple),
)  # fmt: skip


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(  # several chunks parsed from one read, before the reader runs
    answers=[Framed(200, (), b"\x00\x01\x02", chunked=True, chunk_sizes=(1,))], cuts=[400]
)
@given(
    answers=st.lists(FRAMED, min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=12),
)
def test_any_framing_in_any_fragments_reads_exactly_what_was_sent(
    answers: list[Framed], cuts: list[int]
) -> None:
    """Answers of random framing, written in random fragments, over one keep-alive connection."""
    queue = list(answers)

    async def fragmented(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        wire, sizes = queue.pop(0).wire(), list(cuts)
        while wire:
            size = sizes.pop(0) if sizes else len(wire)
            sizes.append(size)
            writer.write(wire[:size])
            await writer.drain()
            await asyncio.sleep(0)
            wire = wire[size:]
        return True

    async def main() -> tuple[list[tuple[int, list[tuple[str, str]], bytes]], list[int]]:
        seen = []
        async with RawServer(fragmented) as server:
            http, _ = client()
            async with http:
                for _ in answers:
                    response = await http.get(server.url)
                    extra = [(k, v) for k, v in response.headers.multi_items() if k not in _FRAMING]
                    seen.append((response.status_code, extra, response.content))
            return seen, [e.connection for e in server.exchanges]

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        seen, connections = runner.run(main())

    expected = [(a.status, [(k.lower(), v) for k, v in a.headers], a.body) for a in answers]
    assert seen == expected
    assert connections == [1] * len(answers)  # every answer was framed: the connection was kept


_FRAMING = ("content-length", "transfer-encoding")


def test_trailer_fields_are_not_taken_for_header_fields(run: Run[Any]) -> None:
    """Fields after a chunked body are not the answer's headers, however the bytes were read."""
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\nContent-Type: text/plain\r\nX-Checksum: 99\r\n\r\n"
    )

    async def main() -> tuple[httpx2.Response, list[int]]:
        async with RawServer(reply(answer)) as server:
            http, _ = client()
            async with http:
                response = await http.get(server.url)
                await http.get(server.url)
            return response, [e.connection for e in server.exchanges]

    response, connections = run(main)

    assert response.headers.raw == [
        (b"Content-Type", b"application/json"),
        (b"Transfer-Encoding", b"chunked"),
    ]
    assert response.json() == {}
    assert connections == [1, 1]


def test_body_without_length_ends_when_the_server_closes(run: Run[Any]) -> None:
    until_close = in_two_writes(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part, ", b"last part", keep_open=False
    )
    assert run(lambda: _twice(until_close)) == ("first part, last part", [1, 2])


def test_repeated_headers_arrive_in_order(run: Run[Any]) -> None:
    answer = (
        b"HTTP/1.1 201 Made Here\r\nSet-Cookie: a=1\r\nX-Trace: one\r\nSet-Cookie: b=2\r\n"
        b"Content-Length: 0\r\n\r\n"
    )

    async def main() -> httpx2.Response:
        async with RawServer(reply(answer)) as server:
            http, _ = client()
            async with http:
                return await http.get(server.url)

    response = run(main)

    assert response.status_code == 201
    assert response.reason_phrase == "Made Here"
    assert response.headers.raw == [
        (b"Set-Cookie", b"a=1"),
        (b"X-Trace", b"one"),
        (b"Set-Cookie", b"b=2"),
        (b"Content-Length", b"0"),
    ]
    assert response.headers.get_list("set-cookie") == ["a=1", "b=2"]


@pytest.mark.parametrize("status", [204, 304])
def test_no_content_answers_have_no_body_and_keep_the_connection(run: Run[Any], status: int) -> None:
    answer = f"HTTP/1.1 {status} X\r\nContent-Length: 5\r\n\r\n".encode()

    async def main() -> tuple[bytes, list[int]]:
        async with RawServer(reply(answer)) as server:
            http, _ = client()
            async with http:
                content = (await http.get(server.url)).content
                await http.get(server.url)
            return content, [e.connection for e in server.exchanges]

    assert run(main) == (b"", [1, 1])


def test_interim_answers_are_skipped(run: Run[Any]) -> None:
    async def main() -> tuple[int, str]:
        async with RawServer(reply(b"HTTP/1.1 100 Continue\r\n\r\n" + OK)) as server:
            http, _ = client()
            async with http:
                response = await http.get(server.url)
            return response.status_code, response.text

    assert run(main) == (200, "ok")


def test_head_answer_has_no_body_and_the_connection_is_reused(run: Run[Any], backend_url: str) -> None:
    async def main() -> tuple[httpx2.Response, set[int]]:
        http, _ = client()
        async with http:
            before = (await http.get(f"{backend_url}/echo/before")).json()["client_port"]
            head = await http.head(f"{backend_url}/respond/200", params={"body": "twelve bytes"})
            after = (await http.get(f"{backend_url}/echo/after")).json()["client_port"]
            return head, {before, after}

    head, ports = run(main)

    assert head.status_code == 200
    assert head.headers["content-length"] == "12"
    assert head.content == b""
    assert len(ports) == 1


# -- what the request looks like on the wire


@pytest.mark.parametrize(
    "url_path",
    ["/caf\u00e9/a%2Fb?q=\u00e4&x=a+b%20c&empty=", "/space here/~tilde?list=1&list=2#frag", "/"],
)
def test_target_is_exactly_what_httpx_encoded(run: Run[Any], url_path: str) -> None:
    async def main() -> tuple[bytes, bytes, bytes]:
        async with RawServer(reply(OK)) as server:
            http, _ = client()
            async with http:
                response = await http.get(server.url + url_path, params={"p": "\u00fc /&"})
            return server.exchanges[0].target, response.request.url.raw_path, server.exchanges[0].head

    target, encoded, head = run(main)

    assert target == encoded
    assert b"#" not in target and b"\xc3" not in target
    assert head.startswith(b"GET " + encoded + b" HTTP/1.1\r\nHost: 127.0.0.1:")


def test_post_sends_the_json_body_with_its_length(run: Run[Any], backend_url: str) -> None:
    payload = {"name": "Zo\u00eb", "tags": ["a", "b"], "n": 1}

    async def main() -> tuple[dict[str, Any], bytes]:
        http, _ = client()
        async with http:
            response = await http.post(f"{backend_url}/echo/customers", json=payload)
            seen: dict[str, Any] = response.json()
            return seen, response.request.content

    seen, sent = run(main)

    assert seen["method"] == "POST"
    assert seen["body"] == payload
    assert seen["headers"]["content-length"] == str(len(sent))
    assert seen["headers"]["content-type"] == "application/json"
    assert seen["headers"]["host"] == backend_url.removeprefix("http://")


def test_streamed_request_body_is_sent_chunked(run: Run[Any], backend_url: str) -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b'{"streamed": '
        yield b"true}"

    async def main() -> dict[str, Any]:
        http, _ = client()
        async with http:
            response = await http.put(f"{backend_url}/echo/s", content=parts())
            seen: dict[str, Any] = response.json()
            return seen

    seen = run(main)

    assert seen["body"] == {"streamed": True}
    assert seen["headers"]["transfer-encoding"] == "chunked"


def test_header_that_would_split_the_request_is_refused_unsent(run: Run[Any]) -> None:
    async def main() -> int:
        async with RawServer(reply(OK)) as server:
            http, _ = client()
            async with http:
                with pytest.raises(httpx2.LocalProtocolError, match="X-Note"):
                    await http.get(server.url, headers={"X-Note": "a\r\nX-Injected: 1"})
            return server.connections

    assert run(main) == 0


# -- streaming, flow control, cancellation


def _endless(server_ref: list[RawServer]) -> Answer:
    async def endless(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 65536
        while True:
            writer.write(b"10000\r\n" + chunk + b"\r\n")
            await writer.drain()
            server_ref[0].sent += len(chunk)

    return endless


def test_a_reader_that_stops_reading_stops_the_server_sending(run: Run[Any]) -> None:
    ref: list[RawServer] = []

    async def main() -> tuple[int, int, int]:
        async with RawServer(_endless(ref)) as server:
            ref.append(server)
            http, transport = client()
            async with http, http.stream("GET", server.url) as response:
                chunks = response.aiter_raw()
                await anext(chunks)
                await asyncio.sleep(0.5)  # the reader stalls; the sender must stall too
                sent_while_stalled = server.sent
                await asyncio.sleep(0.2)
                growth = server.sent - sent_while_stalled
                for _ in range(50):
                    await anext(chunks)
                await chunks.aclose()
            await asyncio.sleep(0.1)
            return sent_while_stalled, growth, transport.open_connections

    sent, growth, still_open = run(main)

    assert sent < 32 * 1024 * 1024  # without flow control loopback moves hundreds of MB in 0.5 s
    assert growth == 0
    assert still_open == 0  # closed early: the connection is ended, not pooled


def test_the_adapter_size_cap_stops_an_endless_body(run: Run[Any]) -> None:
    ref: list[RawServer] = []

    async def main() -> tuple[Any, int, float]:
        async with RawServer(_endless(ref)) as server:
            ref.append(server)
            async with HttpAdapter(max_response_bytes=1_000_000) as adapter:
                started = time.monotonic()
                outcome = await adapter.execute(HttpBinding(base_url=server.url, method="GET", path="/"), {})
                took = time.monotonic() - started
            await asyncio.sleep(0.1)
            return outcome, server.sent, took

    outcome, sent, took = run(main)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MALFORMED
    assert "1000000 bytes" in (outcome.message or "")
    assert took < 3
    assert sent < 32 * 1024 * 1024


def test_cancelled_call_mid_body_closes_the_connection(run: Run[Any]) -> None:
    async def stall_mid_body(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if len(server.exchanges) == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        else:
            writer.write(OK)
        await writer.drain()
        return True

    server = RawServer(stall_mid_body)

    async def main() -> tuple[int, int, list[int], int]:
        async with server:
            http, transport = client()
            async with http:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.2):
                        await http.get(server.url)
                await asyncio.sleep(0.1)
                open_after_cancel = transport.open_connections
                eofs = server.eofs
                assert (await http.get(server.url)).text == "ok"
            return (
                open_after_cancel,
                eofs,
                [e.connection for e in server.exchanges],
                transport.idle_connections,
            )

    open_after_cancel, eofs, connections, _ = run(main)

    assert open_after_cancel == 0
    assert eofs == 1  # the server saw the client end the connection
    assert connections == [1, 2]


def test_response_closed_before_its_body_was_read_ends_the_connection(
    run: Run[Any], backend_url: str
) -> None:
    async def main() -> tuple[int, int]:
        http, transport = client()
        async with http:
            async with http.stream("GET", f"{backend_url}/big", params={"bytes": 2_000_000}) as response:
                assert response.status_code == 200
            open_after_close = transport.open_connections
            assert (await http.get(f"{backend_url}/echo/x")).status_code == 200
            return open_after_close, transport.idle_connections

    assert run(main) == (0, 1)


# -- failures as the adapter's outcome mapping knows them


def test_refused_connection_is_a_connect_error(run: Run[Any], refused_url: str) -> None:
    async def main() -> tuple[int, str, BaseException | None]:
        http, transport = client()
        async with http:
            with pytest.raises(httpx2.ConnectError) as caught:
                await http.get(refused_url)
            return transport.open_connections, str(caught.value), caught.value.__cause__

    still_open, message, cause = run(main)

    assert still_open == 0
    assert message == "All connection attempts failed"  # httpx2's wording, on every event loop
    assert isinstance(cause, ConnectionRefusedError)


def test_unresolvable_host_is_a_connect_error_caused_by_the_lookup(run: Run[Any]) -> None:
    async def main() -> BaseException | None:
        http, _ = client()
        async with http:
            with pytest.raises(httpx2.ConnectError) as caught:
                await http.get("http://no-such-host.invalid/x")
            return caught.value.__cause__

    assert isinstance(run(main), socket.gaierror)


@pytest.mark.parametrize(
    "answer",
    [b"garbage\r\n\r\n", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
    ids=["status-line", "chunk-size"],
)
def test_malformed_answer_is_a_remote_protocol_error(run: Run[Any], answer: bytes) -> None:
    async def main() -> None:
        async with RawServer(reply(answer)) as server:
            http, transport = client()
            async with http:
                with pytest.raises(httpx2.RemoteProtocolError, match="malformed"):
                    await http.get(server.url)
                assert transport.open_connections == 0

    run(main)


def test_connection_closed_mid_body_is_a_remote_protocol_error(run: Run[Any], backend_url: str) -> None:
    async def main() -> None:
        http, _ = client()
        async with http:
            with pytest.raises(httpx2.RemoteProtocolError, match="middle of the body"):
                await http.get(f"{backend_url}/truncated")

    run(main)


def test_silent_server_is_a_read_timeout(run: Run[Any], backend_url: str) -> None:
    async def main() -> None:
        http, _ = client()
        async with http:
            with pytest.raises(httpx2.ReadTimeout):
                await http.get(
                    f"{backend_url}/slow", params={"seconds": 3}, timeout=httpx2.Timeout(5, read=0.2)
                )

    run(main)


def test_unsupported_scheme_is_refused(run: Run[Any]) -> None:
    async def main() -> None:
        _, transport = client()
        with pytest.raises(httpx2.UnsupportedProtocol, match="ftp"):
            await transport.handle_async_request(httpx2.Request("GET", "ftp://127.0.0.1/x"))

    run(main)


def test_closing_the_transport_closes_idle_connections(run: Run[Any]) -> None:
    async def main() -> int:
        async with RawServer(reply(OK)) as server:
            http, _ = client()
            async with http:
                await http.get(server.url)
            await asyncio.sleep(0.1)
            return server.eofs

    assert run(main) == 1


def _first_answered_then_held(release: asyncio.Event) -> Answer:
    """`/first` answered at once, `/unframed` half answered, anything else unanswered, until `release`."""

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.target == b"/first":
            writer.write(OK)
            await writer.drain()
            return True
        if exchange.target == b"/unframed":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part")
            await writer.drain()
        await release.wait()
        return False

    return answer


async def _until(done: Callable[[], bool]) -> None:
    """Give the loop one step at a time until `done()`, so a test can act between two steps."""
    deadline = time.monotonic() + 2
    while not done():
        assert time.monotonic() < deadline, "the awaited state never came"
        await asyncio.sleep(0)


async def _close_while_in_flight(stage: str, server: RawServer, http: httpx2.AsyncClient) -> None:
    """Bring a request to `stage`, close the client under it, then let the request go on."""
    transport = http._transport
    assert isinstance(transport, ColonnadeTransport)
    second = server.url + "/second"
    if stage == "connecting":
        request = asyncio.create_task(http.get(second))
        await _until(lambda: transport.open_connections == 1)  # a slot taken, the connect not done
    elif stage == "handed-a-connection":
        async with http.stream("GET", server.url + "/first") as first:
            assert await anext(first.aiter_raw()) == b"ok"  # all read; the response still open
            request = asyncio.create_task(http.get(second))
            await _until(lambda: bool(transport._waiters))
        # closing `first` handed its connection to the waiting request, which has not run since
    elif stage == "awaiting-the-head":
        await http.get(server.url + "/first")
        request = asyncio.create_task(http.get(second))
        await _until(lambda: len(server.exchanges) == 2)
    else:
        async with http.stream("GET", server.url + "/unframed") as response:
            chunks = response.aiter_raw()
            assert await anext(chunks) == b"first part"
            await http.aclose()
            async for _ in chunks:
                pass
        return
    await http.aclose()
    await request


@pytest.mark.parametrize("stage", ["connecting", "handed-a-connection", "awaiting-the-head", "mid-body"])
def test_closing_the_transport_fails_requests_in_flight_without_sending_them_again(
    run: Run[Any], stage: str
) -> None:
    """Requests in flight at `aclose` fail with a transport error: never sent again on a fresh
    connection, never finished on one opened after the close, never a truncated body passed off
    as the whole answer."""

    async def main() -> tuple[BaseException | None, int, list[bytes], int]:
        release = asyncio.Event()
        async with RawServer(_first_answered_then_held(release)) as server:
            http, transport = client(httpx2.Limits(max_connections=1))
            http.timeout = httpx2.Timeout(1)
            error: BaseException | None = None
            try:
                await _close_while_in_flight(stage, server, http)
            except httpx2.TransportError as exc:
                error = exc
            finally:
                release.set()
                await http.aclose()
            await asyncio.sleep(0.05)
            targets = [e.target for e in server.exchanges]
            return error, transport.open_connections, targets, server.connections

    error, still_open, targets, connections = run(main)

    assert isinstance(error, httpx2.TransportError)
    assert not isinstance(error, httpx2.TimeoutException)  # it failed at the close, not later
    assert still_open == 0
    expected = {"connecting": [], "handed-a-connection": [b"/first"], "mid-body": [b"/unframed"]}
    assert targets == expected.get(stage, [b"/first", b"/second"])
    assert connections == 1


# -- https against a real TLS server


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost, made for this test run."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "colonnade test backend")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    paths = Certificate(folder / "cert.pem", folder / "key.pem")
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture(scope="module")
def tls_url(certificate: Certificate) -> Iterator[str]:
    """The adapter suite's backend behind uvicorn's TLS on a free loopback port."""
    with serve_in_thread(backend_app(), tls=(certificate.cert, certificate.key)) as url:
        yield url


def test_https_with_the_servers_certificate_trusted(
    run: Run[Any], tls_url: str, certificate: Certificate
) -> None:
    trusting = ssl.create_default_context(cafile=str(certificate.cert))

    async def main() -> tuple[set[int], dict[str, Any]]:
        http, _ = client(ssl_context=trusting)
        async with http:
            ports = {(await http.get(f"{tls_url}/echo/{i}")).json()["client_port"] for i in range(3)}
            posted: dict[str, Any] = (await http.post(f"{tls_url}/echo/p", json={"tls": True})).json()
            big = await http.get(f"{tls_url}/big", params={"bytes": 3_000_000, "chunked": "true"})
            assert len(big.content) == 3_000_000 // 1024 * 1024
        return ports, posted

    ports, posted = run(main)

    assert len(ports) == 1
    assert posted["body"] == {"tls": True}


def test_https_with_an_untrusted_certificate_is_a_connect_error(run: Run[Any], tls_url: str) -> None:
    async def main() -> BaseException | None:
        http, transport = client(ssl_context=ssl.create_default_context())
        async with http:
            with pytest.raises(httpx2.ConnectError) as caught:
                await http.get(f"{tls_url}/echo/x")
            assert transport.open_connections == 0
        return caught.value.__cause__

    assert isinstance(run(main), ssl.SSLCertVerificationError)


def test_adapter_reports_an_untrusted_backend_certificate_as_tls_misconfiguration(
    run: Run[Any], tls_url: str
) -> None:
    async def main() -> Any:
        async with HttpAdapter() as adapter:
            return await adapter.execute(HttpBinding(base_url=tls_url, method="GET", path="/echo/x"), {})

    outcome = run(main)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MISCONFIGURED
    assert "TLS" in (outcome.message or "")


def test_adapter_uses_the_colonnade_transport_unless_it_must_honour_proxy_settings(
    run: Run[Any], backend_url: str
) -> None:
    async def main() -> tuple[bool, bool]:
        async with HttpAdapter() as direct, HttpAdapter(trust_env=True) as proxied:
            return (
                isinstance(direct.client_for(backend_url)._transport, ColonnadeTransport),
                isinstance(proxied.client_for(backend_url)._transport, ColonnadeTransport),
            )

    assert run(main) == (True, False)
