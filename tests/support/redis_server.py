"""Redis fixtures: the machine's Redis with a private key prefix, and a Redis a test owns.

The shared Redis is expected at 127.0.0.1:6379 (override with CLN_TEST_REDIS_URL); a test never
flushes it, it keeps to its own `redis_prefix`. A test that stops and restarts Redis starts its own
`redis-server` on a free port (`OwnRedis`). Registered as a pytest plugin in the root conftest.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import uuid
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
import redis.asyncio as redis_asyncio

from tests.support.loopback import free_port
from tests.support.machine_load import patient
from tests.support.suite_env import REDIS_URL_VAR

__all__ = ["REDIS_UP_OP_TIMEOUT_S", "REDIS_URL", "OwnRedis"]

REDIS_URL = os.environ.get(REDIS_URL_VAR, "redis://127.0.0.1:6379/0")
# A test of what replicas share while Redis is up must not see Redis "away" because a busy machine
# delayed one answer past the product's 0.25 s bound: the link would degrade for a probe interval
# and a session or counter would stay on one replica. Tests of the degraded path stop Redis instead.
REDIS_UP_OP_TIMEOUT_S = 5.0
T = TypeVar("T")


async def _redis_problem(url: str) -> str | None:
    client = redis_asyncio.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        await client.ping()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        await client.aclose()
    return None


def _run_apart(work: Coroutine[Any, Any, T]) -> T:
    """Run `work` on a loop of its own in another thread: fixtures may be set up inside a running
    loop (an async fixture asking for one with `request.getfixturevalue`), where `asyncio.run` fails."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The machine's Redis once it answers; fails with what to do otherwise."""
    problem = _run_apart(_redis_problem(REDIS_URL))
    if problem is not None:
        pytest.fail(
            f"Redis is not reachable at {REDIS_URL} ({problem}). Start it (redis-server on "
            f"127.0.0.1:6379) or set {REDIS_URL_VAR}.",
            pytrace=False,
        )
    return REDIS_URL


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix no other test uses, so tests share one Redis without seeing each other."""
    return f"cln-test-{uuid.uuid4().hex[:12]}"


class OwnRedis:
    """A `redis-server` this test starts, stops and restarts on one free port (no persistence)."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (Debian package redis-server)", pytrace=False)
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = patient(10)
        problem = _run_apart(self._wait(deadline))
        if problem is not None:
            self.stop()
            pytest.fail(f"redis-server on port {self.port} did not answer: {problem}", pytrace=False)

    async def _wait(self, within_s: float) -> str | None:
        loop = asyncio.get_running_loop()
        end = loop.time() + within_s
        problem: str | None = "not started"
        while loop.time() < end:
            problem = await _redis_problem(self.url)
            if problem is None:
                return None
            await asyncio.sleep(0.05)
        return problem

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    """A private Redis, started; stopped after the test whatever it did to it."""
    server = OwnRedis()
    server.start()
    try:
        yield server
    finally:
        server.stop()
