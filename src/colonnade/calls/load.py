"""How much work stands in front of a new call: measured, not guessed, so overload can be refused early.

The gateway serves every call on one event loop, which shares its one core between all requests
in flight. A new call therefore finishes after roughly the loop's CPU time per request times the
requests in flight (its own included), plus however late the loop already runs its callbacks.
This module measures those three things while serving:
- requests in flight: counted at the HTTP edge (calls waiting in the SDK or the router count too)
  and, without an edge (stdio, tests), calls inside the pipeline;
- CPU per request: the event-loop thread's CPU time over the requests finished in each sample;
- event-loop lag: how late a timer of the sampler fires.
`predicted_wait_s` combines them; the admission stage compares it with a call's deadline and the
edge compares the count with `max_in_flight`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from collections.abc import AsyncIterator

__all__ = ["DEADLINE", "IN_FLIGHT_LIMIT", "LoadMonitor"]

IN_FLIGHT_LIMIT = "in_flight_limit"
DEADLINE = "deadline"

_SMOOTHING = 0.3  # weight of the newest sample in the moving averages
_MIN_RETRY_AFTER_MS = 50
_MAX_RETRY_AFTER_MS = 30_000


class LoadMonitor:
    def __init__(
        self, *, max_in_flight: int | None = None, shed_late: bool = True, sample_s: float = 0.05
    ) -> None:
        self.max_in_flight = max_in_flight
        self.shed_late = shed_late
        self.sample_s = sample_s
        self.edge_in_flight = 0
        self.calls_in_flight = 0
        self.loop_lag_s = 0.0
        self.cpu_per_request_s = 0.0
        self.shed: Counter[str] = Counter()
        self._edge_done = 0
        self._calls_done = 0

    def configure(self, *, max_in_flight: int | None, shed_late: bool) -> None:
        self.max_in_flight = max_in_flight
        self.shed_late = shed_late

    # -- counting (the edge around each request, the admission stage around each call) ----------

    @property
    def in_flight(self) -> int:
        return max(self.edge_in_flight, self.calls_in_flight)

    def edge_entered(self) -> None:
        self.edge_in_flight += 1

    def edge_left(self, *, served: bool = True) -> None:
        """`served=False` for a request refused at once: its trifling cost says nothing of a call's."""
        self.edge_in_flight -= 1
        self._edge_done += served

    def call_entered(self) -> None:
        self.calls_in_flight += 1

    def call_left(self) -> None:
        self.calls_in_flight -= 1
        self._calls_done += 1

    # -- decisions -----------------------------------------------------------------------------

    def over_bound(self) -> bool:
        """More requests in flight (this one included) than `max_in_flight` allows."""
        return self.max_in_flight is not None and self.in_flight > self.max_in_flight

    def predicted_wait_s(self) -> float:
        """Time until a request that is in flight now is answered, if every request shares the loop."""
        return self.loop_lag_s + self.in_flight * self.cpu_per_request_s

    def retry_after_ms(self) -> int:
        """When to come back: once the work in flight now has been served."""
        wait_ms = math.ceil(self.predicted_wait_s() * 1000)
        return min(_MAX_RETRY_AFTER_MS, max(_MIN_RETRY_AFTER_MS, wait_ms))

    def record_shed(self, reason: str) -> None:
        self.shed[reason] += 1

    # -- sampling -----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def sampling(self) -> AsyncIterator[None]:
        """Measure lag and CPU per request in the background while the body runs."""
        task = asyncio.create_task(self._sample(), name="colonnade-load-monitor")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _sample(self) -> None:
        loop = asyncio.get_running_loop()
        cpu, done = time.thread_time(), self._done()
        while True:
            started = loop.time()
            await asyncio.sleep(self.sample_s)
            self.observe_lag(loop.time() - started - self.sample_s)
            now_cpu, now_done = time.thread_time(), self._done()
            if now_done > done:  # a sample without answers (idle, or only long calls) tells nothing
                self.observe_cpu((now_cpu - cpu) / (now_done - done))
            cpu, done = now_cpu, now_done

    def observe_lag(self, lag_s: float) -> None:
        self.loop_lag_s = _smoothed(self.loop_lag_s, max(0.0, lag_s))

    def observe_cpu(self, per_request_s: float) -> None:
        first = self.cpu_per_request_s == 0.0
        self.cpu_per_request_s = per_request_s if first else _smoothed(self.cpu_per_request_s, per_request_s)

    def _done(self) -> int:
        return max(self._edge_done, self._calls_done)


def _smoothed(average: float, sample: float) -> float:
    return average + _SMOOTHING * (sample - average)
