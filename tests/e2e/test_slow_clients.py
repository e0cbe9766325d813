"""Slow and silent clients against a real gateway process: nothing is held past its bound.

Raw sockets play the clients a library would never be: one that connects and says nothing, one
that drips its headers, one that announces a body it never sends, one with huge headers, and
more connections than the gateway allows. Each must be answered and let go; the gateway keeps
serving meanwhile and logs no traceback. The limits are set small through the environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.e2e.conftest import COLONNADE, contracts_for
from tests.support.loopback import free_port, start_process, stop_process, wait_http

pytestmark = pytest.mark.e2e

LIMITS = {
    "HEADER_TIMEOUT_S": "2",
    "BODY_TIMEOUT_S": "2",
    "KEEP_ALIVE_TIMEOUT_S": "1",
    "MAX_CONNECTIONS": "30",
    "MAX_HEADER_BYTES": "4096",
}
WAIT_S = 10.0  # how long a test waits for the gateway to let go: a failure bound, not a speed target


@dataclass
class Gateway:
    port: int
    log: Path

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT_S)
        return sock


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    tmp = tmp_path_factory.mktemp("slow-clients")
    port = free_port()
    contracts = contracts_for(f"http://127.0.0.1:{free_port()}", tmp / "contracts")  # never called
    env = {
        **os.environ,
        "COLONNADE_DATA_DIR": str(tmp / "data"),
        "COLONNADE_CONTRACTS": json.dumps([str(p) for p in contracts]),
        **{f"COLONNADE_SERVER__{key}": value for key, value in LIMITS.items()},
    }
    env.pop("COLONNADE_DATABASE_URL", None)
    log = tmp / "gateway.log"
    proc = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=tmp, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log=log)
        yield Gateway(port, log)
    finally:
        stop_process(proc)
    assert "Traceback" not in log.read_text(errors="replace")


def _until_closed(sock: socket.socket) -> bytes:
    """Everything the gateway sends until it closes the connection (fails the test if it never does)."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def _answer(raw: bytes) -> tuple[int, dict[str, str], Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, json.loads(body) if body else None


def _healthy(gateway: Gateway) -> bool:
    return httpx2.get(f"http://127.0.0.1:{gateway.port}/healthz", timeout=WAIT_S).status_code == 200


def test_a_connection_that_never_sends_a_byte_is_answered_408_and_closed(gateway: Gateway) -> None:
    with gateway.connect() as sock:
        status, _, body = _answer(_until_closed(sock))
    assert status == 408
    assert body["error"]["code"] == "I-REQ-READ-TIMEOUT"
    assert body["error"]["details"]["phase"] == "headers"


def test_headers_dripped_a_line_at_a_time_are_cut_at_the_header_deadline(gateway: Gateway) -> None:
    with gateway.connect() as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\n".encode())
        sock.settimeout(0.2)
        received = b""
        started = time.monotonic()
        for line in range(int(WAIT_S / 0.2)):
            try:
                sock.sendall(f"X-Drip-{line}: x\r\n".encode())
                received += sock.recv(65536)
            except TimeoutError:
                continue  # nothing from the gateway yet: drip on
            except (BrokenPipeError, ConnectionResetError):
                break
            if not received or received.endswith(b"}"):
                break
        assert time.monotonic() - started < WAIT_S, "the gateway kept reading dripped headers"
    status, _, body = _answer(received)
    assert status == 408 and body["error"]["code"] == "I-REQ-READ-TIMEOUT"


def test_a_body_that_never_arrives_is_cut_at_the_body_deadline(gateway: Gateway) -> None:
    with gateway.connect() as sock:
        sock.sendall(
            f"POST /v1/calls HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\nContent-Type: application/json\r\n"
            'Content-Length: 1000\r\n\r\n{"tool_id"'.encode()
        )
        status, _, body = _answer(_until_closed(sock))
    assert status == 408
    assert body["error"]["details"]["phase"] == "body"
    assert _healthy(gateway)


def _one_answer(sock: socket.socket) -> bytes:
    """One response (headers and its Content-Length of body), without waiting for the connection to close."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"the gateway closed the connection after {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lengths = [line[15:] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    length = int(lengths[0])
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the gateway closed the connection mid-answer"
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.mark.parametrize("path", ["/v1/calls", "/mcp", "/v1/contracts"])
def test_a_declared_body_over_the_limit_is_refused_413_before_any_of_it_arrives(
    gateway: Gateway, path: str
) -> None:
    # 30 MB announced, 10 bytes sent: the answer must not wait for the rest (the body deadline is 2 s
    # here; an edge that reads first answers 408 then, not 413).
    with gateway.connect() as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\nContent-Type: application/json\r\n"
            f'Content-Length: {30 * 1024 * 1024}\r\n\r\n{{"tool_id"'.encode()
        )
        status, _, body = _answer(_one_answer(sock))
    assert status == 413, body
    typed = body["error"]["data"] if path == "/mcp" else body["error"]  # JSON-RPC carries it in `data`
    assert typed["code"] == "I-REQ-TOO-LARGE"
    assert typed["details"]["limit_bytes"] == 1024 * 1024
    assert _healthy(gateway)


def test_headers_over_the_size_limit_get_431(gateway: Gateway) -> None:
    with gateway.connect() as sock:
        sock.sendall(
            f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\nX-Big: {'a' * 8192}\r\n\r\n".encode()
        )
        status, _, body = _answer(_until_closed(sock))
    assert status == 431
    assert body["error"]["code"] == "I-REQ-HEADERS-TOO-LARGE"
    assert body["error"]["details"]["limit_bytes"] == 4096


def test_an_idle_keep_alive_connection_is_closed_after_its_timeout(gateway: Gateway) -> None:
    with gateway.connect() as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\n\r\n".encode())
        sock.settimeout(3.0)  # the setting says 1 s; uvicorn's own default would be 5 s
        received = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 200")


def test_connections_over_the_bound_are_refused_503_and_the_gateway_serves_on(gateway: Gateway) -> None:
    held = [gateway.connect() for _ in range(int(LIMITS["MAX_CONNECTIONS"]))]
    try:
        with gateway.connect() as extra:
            status, headers, body = _answer(_until_closed(extra))
    finally:
        for sock in held:
            sock.close()
    assert status == 503
    assert headers["retry-after"] == "1"
    assert body["error"]["code"] == "R-CAP-CONNECTIONS"
    assert body["error"]["details"]["limit"] == 30
    assert _healthy(gateway)
