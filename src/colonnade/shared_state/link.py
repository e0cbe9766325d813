"""One connection to Redis for the whole gateway, with a clear answer when Redis is away.

Every operation is bounded (`op_timeout_s`): a call must never wait on a slow or absent Redis.
The bound is `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` can swallow a
cancellation that arrives as the operation ends, and a background loop then never stops.
A failed operation marks the link down and raises `SharedStateUnavailable`; while it is down,
operations fail at once (no connect attempt per call) and `watch()` probes with PING until Redis
answers again. The link logs each change of state once, not every failure.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis.asyncio as redis_asyncio
from redis.exceptions import RedisError

from colonnade.errors import ColonnadeError

__all__ = ["RedisLink", "SharedStateUnavailable"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
# What a Redis that is away raises: redis-py's errors, socket errors, the bound, and uvloop's
# RuntimeError for a write on a transport already closed (redis-py lets it through unwrapped).
_AWAY = (RedisError, OSError, TimeoutError, RuntimeError)


class SharedStateUnavailable(ColonnadeError):
    """Redis did not answer in time; the caller uses what this process knows instead."""


class RedisLink:
    """`await link.run(lambda r: r.get(key))` runs one bounded operation against Redis."""

    def __init__(
        self,
        url: str,
        *,
        op_timeout_s: float = 0.25,
        probe_interval_s: float = 1.0,
    ) -> None:
        self.url = url
        self.op_timeout_s = op_timeout_s
        self.probe_interval_s = probe_interval_s
        self.client: redis_asyncio.Redis = redis_asyncio.Redis.from_url(
            url,
            socket_connect_timeout=op_timeout_s,
            socket_timeout=op_timeout_s,
            health_check_interval=0,
        )
        self._up = True
        self._down_since: float | None = None
        self._last_error: str | None = None
        self._recovered = asyncio.Event()

    @property
    def available(self) -> bool:
        return self._up

    @property
    def down_since(self) -> float | None:
        """Wall-clock time (epoch seconds) the link went down, or None while it is up."""
        return self._down_since

    @property
    def last_error(self) -> str | None:
        return self._last_error

    async def run(self, operation: Callable[[redis_asyncio.Redis], Awaitable[T]]) -> T:
        """Run one operation within `op_timeout_s`; raise `SharedStateUnavailable` when Redis is away."""
        if not self._up:
            raise SharedStateUnavailable(f"Redis at {self.safe_url} is unreachable: {self._last_error}")
        try:
            async with asyncio.timeout(self.op_timeout_s):
                return await operation(self.client)
        except _AWAY as exc:
            self.mark_down(exc)
            raise SharedStateUnavailable(
                f"Redis at {self.safe_url} is unreachable: {self._last_error}"
            ) from exc

    def mark_down(self, exc: BaseException) -> None:
        self._last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if self._up:
            self._up = False
            self._down_since = time.time()
            self._recovered.clear()
            logger.warning(
                "shared state degraded: Redis at %s is unreachable (%s); each replica uses its own share "
                "until it answers again",
                self.safe_url,
                self._last_error,
            )

    async def wait_recovered(self) -> None:
        """Return once the link is up (at once when it already is)."""
        if self._up:
            return
        await self._recovered.wait()

    async def watch(self) -> None:
        """Probe a down link until Redis answers; runs for the gateway's lifetime."""
        while True:
            await asyncio.sleep(self.probe_interval_s)
            if self._up:
                continue
            try:
                # Connections pooled before the outage point at a server that is gone (a restarted
                # Redis closed them): drop them, or the first operations after recovery fail on them.
                await self.client.connection_pool.disconnect()
                async with asyncio.timeout(self.op_timeout_s):
                    await self.client.ping()
            except _AWAY as exc:
                self._last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            self._up = True
            self._down_since = None
            self._recovered.set()
            logger.warning("shared state recovered: Redis at %s answers again", self.safe_url)

    async def check(self) -> bool:
        """One PING now (start-up, readiness); marks the link up or down accordingly."""
        try:
            async with asyncio.timeout(self.op_timeout_s):
                await self.client.ping()
        except _AWAY as exc:
            self.mark_down(exc)
            return False
        if not self._up:
            self._up = True
            self._down_since = None
            self._recovered.set()
        return True

    @property
    def safe_url(self) -> str:
        """The URL without its password, for logs and status."""
        scheme, sep, rest = self.url.partition("://")
        if "@" not in rest:
            return self.url
        credentials, _, host = rest.rpartition("@")
        user = credentials.split(":", 1)[0]
        return f"{scheme}{sep}{user + ':***@' if user else '***@'}{host}"

    async def aclose(self) -> None:
        await self.client.aclose()
