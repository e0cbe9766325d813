"""How much work stands in front of a new call: measured, not guessed, so overload can be refused early.

The gateway serves every call on one event loop, which shares its core between all requests in
flight. A new call therefore finishes after roughly the loop's service time per request times the
requests in flight (its own included), plus however late the loop runs its callbacks: that long a
request sat unread before the gateway saw it. This module measures those three things:
- requests in flight: counted at the HTTP edge (calls waiting in the SDK or the router count too)
  and, without an edge (stdio, tests), calls inside the pipeline; and in front of the edge, the
  requests the server has read whose handling has not started yet (`request_read`, from the HTTP
  protocol, until `request_started`): under load a batch of requests is read in one turn of the
  loop, and each waits for the ones read before it;
- service time per request: the event-loop thread's CPU time per request finished in a sample
  while the loop keeps up; while it does not (its timers fire late: busy, or starved of CPU by
  other processes), the wall time of the sample per request finished, which is what it takes;
- event-loop lag: how late a timer of the sampler fires.
`predicted_wait_s` combines them; the admission stage compares it with a call's deadline and the
edge compares the count with `max_in_flight`. The edge also notes when each request arrived
(`ARRIVAL`, a context variable the request's tasks inherit), so the time a call already waited
in front of the pipeline counts against its deadline too. "Arrived" is when the server read the
request's first byte (`RECEIVED_AT`, stamped by the HTTP protocol into the request's scope), not
when the edge's middleware got to it: under load a parsed request waits its turn on the loop
before any application code runs, and that wait is the caller's too.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = [
    "ARRIVAL",
    "DEADLINE",
    "IN_FLIGHT_LIMIT",
    "READ_MARK",
    "RECEIVED_AT",
    "Arrival",
    "LoadMonitor",
    "current_arrival",
    "queued_s",
]

IN_FLIGHT_LIMIT = "in_flight_limit"
DEADLINE = "deadline"
RECEIVED_AT = "colonnade.received_at"
"""In an HTTP scope's `state`: `time.perf_counter()` when the server read the request's first byte."""
READ_MARK = "colonnade.counted_as_read"
"""In an HTTP scope's `state`: the protocol counted the request in `LoadMonitor.waiting`."""

_SMOOTHING = 0.3  # weight of the newest sample in the moving averages
_LAG_SMOOTHING = 0.1  # the lag is noisy (the OS's scheduling shows in it): averaged over ~0.5 s
_BUSY_LAG_S = 0.005  # a sampler timer this late: the loop had no idle moment to run it on time
_BUSY_ANSWERS = 3  # answers a busy sample needs before its wall time per answer is trusted
_MIN_RETRY_AFTER_MS = 50
_MAX_RETRY_AFTER_MS = 30_000


@dataclass(slots=True)
class Arrival:
    """When a request reached the HTTP edge (`time.perf_counter()`); `open` until it is answered.

    `refused` marks a request the admission stage refused: its cost is not a call's.
    """

    at: float
    open: bool = True
    refused: bool = False


ARRIVAL: ContextVar[Arrival | None] = ContextVar("colonnade_arrival", default=None)


def current_arrival() -> Arrival | None:
    """The arrival of the request this task serves, if it came through the edge and is not answered.

    A task that outlives its request (e.g. an MCP session started by an earlier request) still
    sees that request's arrival, closed by then: it counts as no edge.
    """
    arrival = ARRIVAL.get()
    return arrival if arrival is not None and arrival.open else None


def queued_s(started: float) -> float:
    """How long the current request waited between the edge and `started` (0 without an edge)."""
    arrival = current_arrival()
    return 0.0 if arrival is None else max(0.0, started - arrival.at)


class LoadMonitor:
    def __init__(
        self,
        *,
        max_in_flight: int | None = None,
        shed_late: bool = True,
        sample_s: float = 0.05,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.max_in_flight = max_in_flight
        self.shed_late = shed_late
        self.sample_s = sample_s
        self.edge_in_flight = 0
        self.calls_in_flight = 0
        self.waiting = 0
        self.loop_lag_s = 0.0
        self.cpu_per_request_s = 0.0
        self.service_s = 0.0
        self.latency_s = 0.0
        self.shed: Counter[str] = Counter()
        self._rand = rand
        self._edge_done = 0
        self._calls_done = 0

    def configure(self, *, max_in_flight: int | None, shed_late: bool) -> None:
        self.max_in_flight = max_in_flight
        self.shed_late = shed_late

    # -- counting (the edge around each request, the admission stage around each call) ----------

    @property
    def in_flight(self) -> int:
        return max(self.edge_in_flight, self.calls_in_flight)

    def request_read(self) -> None:
        """The server read a request's headers; its handling starts later (`request_started`)."""
        self.waiting += 1

    def request_started(self) -> None:
        self.waiting = max(0, self.waiting - 1)

    def edge_entered(self, received_at: float | None = None) -> Arrival:
        """A request reached the edge; `received_at` is when its first byte was read, if known."""
        self.edge_in_flight += 1
        now = time.perf_counter()
        return Arrival(now if received_at is None else min(received_at, now))

    def edge_left(self, arrival: Arrival, *, served: bool = True) -> None:
        """`served=False` for a request refused at once: its trifling cost says nothing of a call's."""
        arrival.open = False
        self.edge_in_flight -= 1
        if served and not arrival.refused:
            self._edge_done += 1
            self.latency_s = _smoothed(self.latency_s, time.perf_counter() - arrival.at)

    def call_entered(self) -> None:
        self.calls_in_flight += 1

    def call_left(self, *, served: bool = True) -> None:
        self.calls_in_flight -= 1
        self._calls_done += served

    # -- decisions -----------------------------------------------------------------------------

    def over_bound(self) -> bool:
        """More requests in flight (this one included) than `max_in_flight` allows."""
        return self.max_in_flight is not None and self.in_flight > self.max_in_flight

    def predicted_wait_s(self) -> float:
        """Time until a request that is in flight now is answered, if every request shares the loop.

        The requests in flight times the service time (while the loop is saturated, Little's law:
        requests in flight over the rate it answers them), plus the lag: that long a request sat
        unread in its socket before the edge could count it, a wait no timestamp of ours records.
        The requests read but not yet started are in front too.
        """
        return self.loop_lag_s + (self.in_flight + self.waiting) * self.service_s

    def retry_after_ms(self) -> int:
        """When to come back: about when the work in flight now has been served, spread from half
        to one and a half times that, so that the callers refused together do not return together."""
        wait_ms = math.ceil(self.predicted_wait_s() * 1000 * (0.5 + self._rand()))
        return min(_MAX_RETRY_AFTER_MS, max(_MIN_RETRY_AFTER_MS, wait_ms))

    def record_shed(self, reason: str) -> None:
        self.shed[reason] += 1

    # -- sampling -----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def sampling(self) -> AsyncIterator[None]:
        """Measure lag and service time per request in the background while the body runs."""
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
            elapsed = loop.time() - started
            lag = elapsed - self.sample_s
            self.observe_lag(lag)
            now_cpu, now_done = time.thread_time(), self._done()
            answered = now_done - done
            if answered:  # a sample without answers (idle, or only long calls) tells nothing
                busy = lag >= _BUSY_LAG_S and answered >= _BUSY_ANSWERS
                self.observe_service((now_cpu - cpu) / answered, elapsed / answered if busy else None)
            cpu, done = now_cpu, now_done

    def observe_lag(self, lag_s: float) -> None:
        self.loop_lag_s = _smoothed(self.loop_lag_s, max(0.0, lag_s), _LAG_SMOOTHING)

    def observe_service(self, cpu_s: float, wall_s: float | None = None) -> None:
        """One sample: loop CPU per answer, and wall time per answer when the loop was busy throughout."""
        service = cpu_s if wall_s is None else max(cpu_s, wall_s)
        first = self.service_s == 0.0
        self.cpu_per_request_s = cpu_s if first else _smoothed(self.cpu_per_request_s, cpu_s)
        self.service_s = service if first else _smoothed(self.service_s, service)

    def _done(self) -> int:
        return max(self._edge_done, self._calls_done)


def _smoothed(average: float, sample: float, weight: float = _SMOOTHING) -> float:
    return average + weight * (sample - average)
