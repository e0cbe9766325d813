"""Real servers on loopback for tests: ASGI apps in a thread, and child processes that must answer."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import uvicorn
from starlette.types import ASGIApp

from tests.support.machine_load import load_factor, patient

__all__ = ["free_port", "serve_in_thread", "start_process", "stop_process", "wait_http"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_in_thread(
    app: ASGIApp, *, lifespan: str = "off", tls: tuple[Path, Path] | None = None
) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 at a free port; yields the base URL, stops the server on exit.

    `tls` is (certificate file, key file): the server then speaks https.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan=lifespan,
        timeout_graceful_shutdown=2,
        ssl_certfile=str(tls[0]) if tls else None,
        ssl_keyfile=str(tls[1]) if tls else None,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the loopback server did not start")
        time.sleep(0.01)
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def start_process(cmd: Sequence[str], log: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start a child whose output goes to `log`: a pipe nobody reads would block it once full."""
    with log.open("wb") as sink:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(list(cmd), stdout=sink, stderr=subprocess.STDOUT, **kwargs)


def wait_http(
    url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0, log: Path | None = None
) -> None:
    """Wait until `url` answers below 500; fail with the process's output if it dies first.

    `timeout` is for an idle machine: the wait grows with the machine's load while it lasts.
    """
    started = time.monotonic()
    while time.monotonic() - started < patient(timeout):
        if proc.poll() is not None:
            if log is not None:
                out = log.read_text(errors="replace")[-4000:]
            else:
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered:\n{out}")
        try:
            if httpx2.get(url, timeout=1.0).status_code < 500:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.05)
    waited = time.monotonic() - started
    raise RuntimeError(f"{url} did not answer within {waited:.0f} s (load factor {load_factor():.1f})")


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
