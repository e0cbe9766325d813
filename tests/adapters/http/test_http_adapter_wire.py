"""What the adapter's HTTP client does on the wire, against real loopback servers, on asyncio and uvloop.

A scripted raw HTTP server on the test's own event loop produces the edge cases a framework would
not (a connection closed under a request, a half answer, trailers, odd framing); the adapter
suite's uvicorn backend and uvicorn over TLS cover the ordinary ones.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import uvloop
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http.tools import HttpTools
from colonnade.adapters.outcome import (
    MALFORMED,
    TIMEOUT,
    UNREACHABLE,
    AdapterOutcome,
    OutcomeKind,
)
from colonnade.adapters.registry import Invocation
from colonnade.catalog.http_binding import HttpBinding, ParamLocation, ParamSpec
from colonnade.catalog.projection import project_contract
from colonnade.catalog.tool import Tool
from colonnade.contracts.model import Contract
from colonnade.governance.principal import ANONYMOUS_LOOPBACK
from tests.adapters.conftest import Run
from tests.adapters.raw_server import OK, Answer, Exchange, RawServer, reply


def operation(url: str, method: str = "GET", path: str = "/") -> HttpBinding:
    """An operation with one body argument `n`, sent as `{"n": ...}` when given."""
    return HttpBinding(
        base_url=url, method=method, path=path, params=(ParamSpec("n", ParamLocation.BODY, "n"),)
    )


async def call(
    adapter: HttpAdapter,
    url: str,
    path: str = "/",
    method: str = "GET",
    headers: dict[str, str] | None = None,
    *,
    deduplicated: bool = False,
    **arguments: Any,
) -> AdapterOutcome:
    return await adapter.execute(
        operation(url, method, path), arguments, headers=headers, deduplicated=deduplicated
    )


# -- keep-alive, and what is sent again when a kept-alive connection fails


def test_sequential_calls_reuse_one_connection(run: Run[Any]) -> None:
    async def main() -> list[int]:
        async with RawServer(reply(OK)) as server, HttpAdapter() as adapter:
            for _ in range(3):
                assert (await call(adapter, server.url)).body == "ok"
            return [e.connection for e in server.exchanges]

    assert run(main) == [1, 1, 1]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_idle_connection_the_server_closed_is_not_used_again(run: Run[Any], method: str) -> None:
    """The server ends the idle connection; the next request, a POST too, goes once on a fresh one."""

    async def answer_then_close(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(OK)
        await writer.drain()
        return False

    async def main() -> list[tuple[int, bytes]]:
        async with RawServer(answer_then_close) as server, HttpAdapter() as adapter:
            await call(adapter, server.url, "/one")
            await asyncio.sleep(0.1)  # the server's close reaches the pool
            outcome = await call(adapter, server.url, "/two", method, n=2)
            assert outcome.kind is OutcomeKind.SUCCESS, outcome
            return [(e.connection, e.target) for e in server.exchanges]

    assert run(main) == [(1, b"/one"), (2, b"/two")]


@pytest.mark.parametrize(
    ("method", "headers", "deduplicated", "sent_again"),
    [
        ("GET", {}, False, True),
        ("PUT", {}, False, True),
        ("DELETE", {}, False, True),
        ("POST", {"Idempotency-Key": "k-1"}, True, True),
        ("PATCH", {"Idempotency-Key": "k-2"}, True, True),
        # a key alone proves nothing: a backend that ignores it would run the request twice
        ("POST", {"Idempotency-Key": "k-3"}, False, False),
        ("POST", {}, True, False),  # the server may have acted on it: the pipeline's retry stage decides
        ("PATCH", {}, False, False),
    ],
)
def test_request_on_a_connection_the_server_closed_under_it_is_sent_again_only_when_safe(
    run: Run[Any], method: str, headers: dict[str, str], deduplicated: bool, sent_again: bool
) -> None:
    """The server reads the request on a kept-alive connection, then closes it without a byte of
    answer, as a server timing out an idle connection at that very moment does."""

    async def drop_second_request(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.connection == 1 and len(server.exchanges) == 2:
            return False
        writer.write(OK)
        await writer.drain()
        return True

    server = RawServer(drop_second_request)

    async def main() -> tuple[AdapterOutcome, list[tuple[int, bytes, bytes]]]:
        async with server, HttpAdapter() as adapter:
            await call(adapter, server.url, "/one")
            outcome = await call(
                adapter, server.url, "/two", method, headers, deduplicated=deduplicated, n=2
            )
            return outcome, [(e.connection, e.target, e.body) for e in server.exchanges]

    outcome, exchanges = run(main)

    body = b'{"n":2}'
    expected = [(1, b"/one", b""), (1, b"/two", body)] + ([(2, b"/two", body)] if sent_again else [])
    assert exchanges == expected
    if sent_again:
        assert outcome.kind is OutcomeKind.SUCCESS
    else:
        assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
        assert outcome.error_code == UNREACHABLE


@pytest.mark.parametrize(
    ("method", "headers", "attempts"),
    [
        ("GET", {}, 2),
        ("POST", {"Idempotency-Key": "k-1"}, 2),  # sent as the backend deduplicates (see below)
        ("POST", {}, 1),
        ("PATCH", {}, 1),
    ],
)
@pytest.mark.parametrize(
    "answer", [b"", b"HTTP/1.1 200 OK\r\nContent-Le"], ids=["no-answer", "half-a-head"]
)
def test_a_request_is_sent_at_most_twice_and_a_post_without_a_key_once(
    run: Run[Any], method: str, headers: dict[str, str], attempts: int, answer: bytes
) -> None:
    """A server that always closes the connection after reading the request (and maybe a few
    bytes of answer): the adapter gives up after one more attempt, or none."""

    async def main() -> tuple[AdapterOutcome, int]:
        async with RawServer(reply(answer, keep_open=False)) as server, HttpAdapter() as adapter:
            outcome = await call(adapter, server.url, "/x", method, headers, deduplicated=True, n=1)
            await asyncio.sleep(0.05)
            return outcome, len(server.exchanges)

    outcome, sent = run(main)

    assert sent == attempts
    assert outcome.kind is OutcomeKind.RETRYABLE_ERROR
    assert outcome.error_code == UNREACHABLE


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
    async def main() -> list[int]:
        async with RawServer(reply(answer)) as server, HttpAdapter() as adapter:
            for _ in range(2):
                assert (await call(adapter, server.url)).body == "ok"
            return [e.connection for e in server.exchanges]

    assert run(main) == ([1, 1] if reused else [1, 2])


def test_connection_management_headers_of_a_caller_are_not_sent(run: Run[Any]) -> None:
    """`Connection: close` or a `Content-Length` from a caller would be a lie about the connection
    or the body; the client sets those, the caller's other headers go through."""

    async def main() -> tuple[list[int], bytes]:
        headers = {"Connection": "close", "Content-Length": "99", "Idempotency-Key": "k-1"}
        async with RawServer(reply(OK)) as server, HttpAdapter() as adapter:
            for _ in range(2):
                assert (await call(adapter, server.url, method="POST", headers=headers, n=1)).ok
            return [e.connection for e in server.exchanges], server.exchanges[0].head.lower()

    connections, head = run(main)

    assert connections == [1, 1]
    assert b"\r\nidempotency-key: k-1\r\n" in head
    assert b"content-length: 7\r\n" in head
    assert b"connection:" not in head


# -- response framing


def in_two_writes(first: bytes, second: bytes, *, keep_open: bool) -> Answer:
    """Answer in two writes with a pause between them, so the client sees two reads."""

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        for part in (first, second):
            writer.write(part)
            await writer.drain()
            await asyncio.sleep(0.02)
        return keep_open

    return answer


async def _twice(answer: Answer) -> tuple[AdapterOutcome, list[int]]:
    """The first call's outcome, and which connection carried each of two calls."""
    async with RawServer(answer) as server, HttpAdapter() as adapter:
        outcome = await call(adapter, server.url)
        await call(adapter, server.url)
        return outcome, [e.connection for e in server.exchanges]


def test_chunked_body_split_across_writes(run: Run[Any]) -> None:
    chunked = in_two_writes(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        b"lo\r\n7\r\n, world\r\n0\r\n\r\n",
        keep_open=True,
    )
    outcome, connections = run(lambda: _twice(chunked))

    assert outcome.body == "hello, world"
    assert connections == [1, 1]


def test_body_without_length_ends_when_the_server_closes(run: Run[Any]) -> None:
    until_close = in_two_writes(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part, ", b"last part", keep_open=False
    )
    outcome, connections = run(lambda: _twice(until_close))

    assert outcome.kind is OutcomeKind.SUCCESS
    assert outcome.body == "first part, last part"
    assert connections == [1, 2]


def test_trailer_fields_are_not_taken_for_header_fields(run: Run[Any]) -> None:
    """Fields after a chunked body are not the answer's headers: the body stays JSON and the
    trailer's wrong digest is not held against it."""
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\nContent-Type: text/plain\r\nContent-Digest: sha-256=:AAAA:\r\n\r\n"
    )
    outcome, connections = run(lambda: _twice(reply(answer)))

    assert outcome.kind is OutcomeKind.SUCCESS, outcome
    assert outcome.body == {}
    assert connections == [1, 1]


@pytest.mark.parametrize("status", [204, 304])
def test_no_content_answers_have_no_body_and_keep_the_connection(run: Run[Any], status: int) -> None:
    answer = f"HTTP/1.1 {status} X\r\nContent-Length: 5\r\n\r\n".encode()
    outcome, connections = run(lambda: _twice(reply(answer)))

    assert outcome.status_code == status
    assert outcome.body is None
    assert connections == [1, 1]


def test_interim_answers_are_skipped(run: Run[Any]) -> None:
    outcome, _ = run(lambda: _twice(reply(b"HTTP/1.1 100 Continue\r\n\r\n" + OK)))

    assert (outcome.status_code, outcome.body) == (200, "ok")


def test_head_answer_has_no_body_and_the_connection_is_reused(run: Run[Any], backend_url: str) -> None:
    respond = HttpBinding(
        base_url=backend_url,
        method="HEAD",
        path="/respond/200",
        params=(ParamSpec("body", ParamLocation.QUERY, "body"),),
    )

    async def main() -> tuple[AdapterOutcome, set[int]]:
        async with HttpAdapter() as adapter:
            before = (await call(adapter, backend_url, "/echo/before")).body["client_port"]
            head = await adapter.execute(respond, {"body": "twelve bytes"})
            after = (await call(adapter, backend_url, "/echo/after")).body["client_port"]
            return head, {before, after}

    head, ports = run(main)

    assert (head.kind, head.status_code, head.body) == (OutcomeKind.SUCCESS, 200, None)
    assert len(ports) == 1


@pytest.mark.parametrize(
    "answer",
    [b"garbage\r\n\r\n", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
    ids=["status-line", "chunk-size"],
)
def test_malformed_answer_is_unreachable_and_its_connection_is_dropped(run: Run[Any], answer: bytes) -> None:
    async def first_malformed(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(answer if exchange.connection == 1 else OK)
        await writer.drain()
        return True

    async def main() -> tuple[AdapterOutcome, AdapterOutcome, int]:
        async with RawServer(first_malformed) as server, HttpAdapter() as adapter:
            bad = await call(adapter, server.url, method="POST")
            good = await call(adapter, server.url, method="POST")
            return bad, good, server.connections

    bad, good, connections = run(main)

    assert (bad.kind, bad.error_code) == (OutcomeKind.RETRYABLE_ERROR, UNREACHABLE), bad
    assert good.body == "ok"
    assert connections == 2


@dataclass(frozen=True)
class Framed:
    """One answer as the server frames it; the body is UTF-8 text so the outcome shows it exactly."""

    status: int
    headers: tuple[tuple[str, str], ...]
    text: str
    chunked: bool
    chunk_sizes: tuple[int, ...]

    def wire(self) -> bytes:
        body = self.text.encode()
        lines = [f"HTTP/1.1 {self.status} Whatever".encode(), b"Content-Type: text/plain; charset=utf-8"]
        lines += [f"{name}: {value}".encode() for name, value in self.headers]
        if 200 <= self.status < 300:  # the adapter checks it: any byte out of place fails the call
            digest = base64.b64encode(hashlib.sha256(body).digest())
            lines.append(b"Content-Digest: sha-256=:" + digest + b":")
        if not self.chunked:
            lines.append(f"Content-Length: {len(body)}".encode())
            return b"\r\n".join(lines) + b"\r\n\r\n" + body
        lines.append(b"Transfer-Encoding: chunked")
        out, rest, sizes = [b"\r\n".join(lines) + b"\r\n\r\n"], body, list(self.chunk_sizes)
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
        st.tuples(st.sampled_from(["X-Trace", "Retry-After", "Set-Cookie"]),
                  st.text(alphabet="abcdefghij0123456789 =;/-", min_size=1, max_size=30).map(str.strip)
                  .filter(bool)),
        max_size=4,
    ).map(tuple),
    text=st.text(max_size=1500),
    chunked=st.booleans(),
    chunk_sizes=st.lists(st.integers(min_value=1, max_value=700), max_size=8).map(tuple),
)  # fmt: skip


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(  # several chunks parsed from one read, before the reader runs
    answers=[Framed(200, (), "\x00\x01\x02", chunked=True, chunk_sizes=(1,))], cuts=[400]
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

    async def main() -> tuple[list[tuple[int | None, Any]], list[int]]:
        async with RawServer(fragmented) as server, HttpAdapter() as adapter:
            seen = []
            for _ in answers:
                outcome = await call(adapter, server.url)
                assert outcome.error_code in (None, *_STATUS_CODES), outcome
                seen.append((outcome.status_code, outcome.body))
            return seen, [e.connection for e in server.exchanges]

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        seen, connections = runner.run(main())

    assert seen == [(a.status, a.text or None) for a in answers]
    assert connections == [1] * len(answers)  # every answer was framed: the connection was kept


# the codes the sampled statuses map to: anything else (a checksum or data error) is a misread
_STATUS_CODES = (
    "I-REQ-UPSTREAM-REJECTED",
    "I-REQ-UPSTREAM-NOT-FOUND",
    "P-PRECOND-CONFLICT",
    "R-UPSTREAM-429",
    "R-UPSTREAM-UNAVAILABLE",
    "S-TOOL-UPSTREAM-FAULT",
)


# -- the request on the wire


def test_the_target_is_exactly_what_the_adapter_encoded(run: Run[Any]) -> None:
    binding = HttpBinding(
        base_url="http://placeholder",
        method="GET",
        path="/caf\u00e9/{id}/{dots}",
        params=(
            ParamSpec("id", ParamLocation.PATH, "id"),
            ParamSpec("dots", ParamLocation.PATH, "dots"),
            ParamSpec("q", ParamLocation.QUERY, "q"),
        ),
    )

    async def main() -> tuple[bytes, str]:
        async with RawServer(reply(OK)) as server, HttpAdapter() as adapter:
            op = HttpBinding(**{**vars_of(binding), "base_url": server.url + "/base/"})
            assert (await adapter.execute(op, {"id": "a/b", "dots": "..", "q": "\u00fc /&"})).ok
            return server.exchanges[0].head, server.url

    head, url = run(main)

    target = b"/base/caf%C3%A9/a%2Fb/%2E%2E?q=%C3%BC%20%2F%26"
    assert head.startswith(b"GET " + target + b" HTTP/1.1\r\n")
    assert f"\r\nHost: {url.removeprefix('http://')}\r\n".encode() in head


def vars_of(binding: HttpBinding) -> dict[str, Any]:
    return {name: getattr(binding, name) for name in HttpBinding.__dataclass_fields__}


# -- cancellation and size


def _endless(sent: list[int]) -> Answer:
    async def endless(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 65536
        while True:
            writer.write(b"10000\r\n" + chunk + b"\r\n")
            await writer.drain()
            sent[0] += len(chunk)

    return endless


def test_the_size_cap_stops_an_endless_body(run: Run[Any]) -> None:
    async def main() -> tuple[AdapterOutcome, int, float]:
        sent = [0]
        async with RawServer(_endless(sent)) as server, HttpAdapter(max_response_bytes=1_000_000) as adapter:
            started = time.monotonic()
            outcome = await call(adapter, server.url)
            took = time.monotonic() - started
            await asyncio.sleep(0.1)
        return outcome, sent[0], took

    outcome, sent, took = run(main)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MALFORMED
    assert "1000000 bytes" in (outcome.message or "")
    assert took < 3
    assert sent < 32 * 1024 * 1024  # the connection was closed, not drained


def test_a_call_timed_out_mid_body_closes_its_connection(run: Run[Any]) -> None:
    async def stall_mid_body(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.connection == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        else:
            writer.write(OK)
        await writer.drain()
        return True

    async def main() -> tuple[AdapterOutcome, int, list[int]]:
        async with RawServer(stall_mid_body) as server, HttpAdapter() as adapter:
            timed_out = await adapter.execute(operation(server.url), {}, timeout_s=0.2)
            await asyncio.sleep(0.1)
            eofs = server.eofs
            assert (await call(adapter, server.url)).body == "ok"
            return timed_out, eofs, [e.connection for e in server.exchanges]

    timed_out, eofs, connections = run(main)

    assert timed_out.error_code == TIMEOUT
    assert eofs == 1  # the server saw the client end the connection
    assert connections == [1, 2]


# -- closing the adapter under calls in flight


def _held(release: asyncio.Event) -> Answer:
    """`/unframed` half answered, anything else unanswered, until `release`."""

    async def answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        if exchange.target == b"/unframed":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part")
            await writer.drain()
        await release.wait()
        return False

    return answer


async def _until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 2
    while not done():
        assert time.monotonic() < deadline, "the awaited state never came"
        await asyncio.sleep(0.005)


@pytest.mark.parametrize(
    "stage", ["tls-handshake", "awaiting-the-head", "waiting-for-a-connection", "mid-body"]
)
def test_closing_the_adapter_fails_calls_in_flight_without_sending_them_again(
    run: Run[Any], stage: str
) -> None:
    """Calls in flight at `aclose()` fail at once: never sent again, never finished on a connection
    opened after the close, never a truncated body passed off as the whole answer."""

    async def main() -> tuple[list[AdapterOutcome], float, list[bytes], int]:
        release = asyncio.Event()
        async with RawServer(_held(release)) as server:
            adapter = HttpAdapter(max_connections=1, default_timeout_s=5)
            url = server.url.replace("http://", "https://") if stage == "tls-handshake" else server.url
            path = "/unframed" if stage == "mid-body" else "/held"
            calls = [asyncio.create_task(call(adapter, url, path))]
            await _until(lambda: server.connections == 1 and (stage == "tls-handshake" or server.exchanges))
            if stage == "waiting-for-a-connection":
                calls.append(asyncio.create_task(call(adapter, url, "/second", "POST", n=1)))
            await asyncio.sleep(0.05)  # the calls reach the stage under test
            started = time.monotonic()
            await adapter.aclose()
            outcomes = await asyncio.gather(*calls)
            took = time.monotonic() - started
            release.set()
            await asyncio.sleep(0.1)
            return outcomes, took, [e.target for e in server.exchanges], server.connections

    outcomes, took, targets, connections = run(main)

    for outcome in outcomes:
        assert (outcome.kind, outcome.error_code) == (OutcomeKind.RETRYABLE_ERROR, UNREACHABLE), outcome
        assert "closed" in (outcome.message or "")
    assert took < 2.5  # failed at the close, not at the 5 s timeout (half of it: a busy machine)
    expected = {"tls-handshake": [], "mid-body": [b"/unframed"]}
    assert targets == expected.get(stage, [b"/held"])
    assert connections == 1


@pytest.mark.parametrize(("deduplicates", "requests"), [(True, 2), (False, 1)])
def test_a_keyed_call_is_sent_again_only_to_a_backend_its_contract_says_deduplicates(
    run: Run[Any], deduplicates: bool, requests: int
) -> None:
    """The HTTP tools adapter takes `runtime.deduplicates_idempotency_key` from the tool's contract:
    a payment backend that ignores the key must not see the request twice."""

    async def close_without_answer(exchange: Exchange, writer: asyncio.StreamWriter) -> bool:
        return False

    async def main() -> tuple[AdapterOutcome, int]:
        async with RawServer(close_without_answer) as server, HttpAdapter() as adapter:
            tool = _payment_tool(server.url, deduplicates)
            invocation = Invocation(
                tool=tool,
                arguments={"note": "n"},
                timeout_s=5.0,
                principal=ANONYMOUS_LOOPBACK,
                call_id="c-1",
                trace_id="t-1",
                idempotency_key="cln-k-1",
            )
            outcome = await HttpTools(adapter).execute(invocation)
            await asyncio.sleep(0.05)
            return outcome, len(server.exchanges)

    outcome, sent = run(main)

    assert sent == requests
    assert outcome.error_code == UNREACHABLE


def _payment_tool(url: str, deduplicates: bool) -> Tool:
    contract = Contract.model_validate(
        {
            "name": "pay",
            "version": "1.0.0",
            "tenant": "t",
            "display_name": "Pay",
            "description": "Payments",
            "status": "published",
            "backend": {"base_url": url},
            "endpoints": [
                {
                    "path": "/payments",
                    "methods": ["POST"],
                    "operation_id": "pay",
                    "input_schema": {"type": "object", "properties": {"note": {"type": "string"}}},
                    "runtime": {"deduplicates_idempotency_key": deduplicates},
                }
            ],
        }
    )
    return project_contract(contract)[0]
