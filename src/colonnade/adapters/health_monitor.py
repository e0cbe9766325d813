"""Readiness of tool backends, probed in the background so calls never wait on a health check.

A URL is healthy until proven otherwise; `FAILURES_TO_TRIP` failed probes in a row mark it
unhealthy, one success marks it healthy again. Probes use aiohttp, the backend adapter's client, so
the path to backends has one HTTP stack; a redirect is not followed and counts as a failure.

Across replicas each change of a backend's readiness seen here is told to `on_change` (the gateway
publishes it on the change fan-out). A backend found unhealthy elsewhere is marked unhealthy here
at once (`seen_elsewhere`), so no replica sends calls to it while its own probes catch up; one
found healthy again elsewhere is probed here at once rather than trusted, so a backend that only
some replicas can reach stays unhealthy where it is unreachable. Calls read the local state only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

__all__ = ["FAILURES_TO_TRIP", "HealthMonitor"]

logger = logging.getLogger(__name__)
FAILURES_TO_TRIP = 2


@dataclass
class _State:
    failures: int = 0
    healthy: bool = True
    failing_since: float | None = None


class HealthMonitor:
    def __init__(
        self,
        *,
        interval_s: float = 5.0,
        timeout_s: float = 2.0,
        on_change: Callable[[str, bool], None] | None = None,
    ) -> None:
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.on_change = on_change
        """Told (url, healthy) when a probe here changes a backend's readiness; must not block."""
        self._states: dict[str, _State] = {}
        self._session: aiohttp.ClientSession | None = None

    async def seen_elsewhere(self, url: str, healthy: bool) -> None:
        """Another replica's probe changed this backend's readiness (see the module's docstring)."""
        state = self._states.setdefault(url, _State())
        if healthy:
            if not state.healthy:
                await self.probe(url)
            return
        if state.healthy:
            state.failures, state.healthy = max(state.failures, FAILURES_TO_TRIP), False
            state.failing_since = state.failing_since or time.time()
            logger.warning("backend readiness failing (seen by another replica): %s", url)

    def watch(self, url: str) -> None:
        self._states.setdefault(url, _State())

    def healthy(self, url: str) -> bool:
        state = self._states.get(url)
        if state is None:
            self.watch(url)
            return True
        return state.healthy

    def failing_since(self, url: str) -> float | None:
        state = self._states.get(url)
        return state.failing_since if state is not None else None

    async def probe(self, url: str) -> bool:
        """Probe one URL now and update its state; True when it answered 2xx."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout_s), cookie_jar=aiohttp.DummyCookieJar()
            )
        state = self._states.setdefault(url, _State())
        try:
            async with self._session.get(url, allow_redirects=False) as response:
                ok = 200 <= response.status < 300
        except (aiohttp.ClientError, TimeoutError):
            ok = False
        if ok:
            restored = not state.healthy
            state.failures, state.healthy, state.failing_since = 0, True, None
            if restored:
                logger.info("backend readiness restored: %s", url)
                self._told(url, True)
        else:
            state.failures += 1
            if state.failing_since is None:
                state.failing_since = time.time()
            if state.healthy and state.failures >= FAILURES_TO_TRIP:
                state.healthy = False
                logger.warning("backend readiness failing: %s", url)
                self._told(url, False)
        return ok

    def _told(self, url: str, healthy: bool) -> None:
        if self.on_change is not None:
            self.on_change(url, healthy)

    async def probe_all(self) -> None:
        await asyncio.gather(*(self.probe(url) for url in list(self._states)))

    async def run(self) -> None:
        """Probe every watched URL each interval until cancelled."""
        while True:
            await self.probe_all()
            await asyncio.sleep(self.interval_s)

    async def aclose(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):
                await self._session.close()
            self._session = None
