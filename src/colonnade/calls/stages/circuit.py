"""Circuit breaker: stop calling a backend that keeps failing, and fail fast until it may be back.

It sits between retry and execute, so every attempt counts, retries included. Per backend
(`host:port`), attempts of the last `circuit.window_ms` are kept; once at least `min_attempts`
of them were made and `failure_ratio` of them failed, the circuit opens: for `open_ms` every
call of that backend ends at once with the retryable `R-UPSTREAM-CIRCUIT-OPEN` and
`retry_after_ms`. Then one call goes through as a probe (half-open): its success closes the
circuit, its failure opens it again. A failure is an answer that says the backend is down or
broken (unreachable, 502/503/504, 5xx) or a timeout of an attempt that had (90 % of) the tool's
whole default timeout; a 4xx or a 429 is a backend that answers. A timeout of a caller's own
short deadline says nothing about the backend, so a caller cannot open the circuit for everyone.
The refusal does not name the backend's address (clients never see where backends live); the
log line of an opening circuit and the `colonnade_backend_circuit_*` metrics do, for operators.

Across replicas only the opening is shared: a circuit that opens here is told to `on_open` (the
gateway publishes it on the change fan-out) and `opened_elsewhere` opens it on every other replica
at once, so they fail fast too instead of each spending `min_attempts` calls to learn the same.
Each replica keeps its own state and decides its own probe: a call never waits on Redis, and a
backend only one replica can reach keeps being called from there.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from colonnade.adapters.outcome import SERVER_FAULT, TIMEOUT, UNAVAILABLE, UNREACHABLE
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.manifest import Circuit, host_port
from colonnade.calls.pipeline import Next
from colonnade.catalog.http_binding import HttpBinding

__all__ = ["CIRCUIT_OPEN", "CircuitBreaker", "CircuitState"]

logger = logging.getLogger(__name__)

CIRCUIT_OPEN = "R-UPSTREAM-CIRCUIT-OPEN"
PROBE_RETRY_AFTER_MS = 200
_FULL_TIME_SHARE = 0.9  # an attempt with this share of the default timeout had the backend's full time
_FAILURES = frozenset({UNREACHABLE, UNAVAILABLE, SERVER_FAULT})
_NEUTRAL = frozenset({"S-TOOL-CONFIG", "S-TOOL-INTERNAL", "I-REQ-SCHEMA"})  # the gateway's own faults


class CircuitState(IntEnum):
    """Values of the `colonnade_backend_circuit_state` gauge."""

    CLOSED = 0
    HALF_OPEN = 1
    OPEN = 2


@dataclass
class _Backend:
    state: CircuitState = CircuitState.CLOSED
    attempts: deque[tuple[float, bool]] = field(default_factory=deque)  # (when, failed)
    failures: int = 0
    opened_at: float = 0.0
    probing: bool = False
    opened_total: int = 0

    def record(self, now: float, failed: bool, circuit: Circuit) -> None:
        self.attempts.append((now, failed))
        self.failures += failed
        horizon = now - circuit.window_ms / 1000
        while self.attempts and self.attempts[0][0] < horizon:
            self.failures -= self.attempts.popleft()[1]
        count = len(self.attempts)
        if count >= circuit.min_attempts and self.failures >= circuit.failure_ratio * count:
            self.open(now)

    def open(self, now: float) -> None:
        self.state, self.opened_at, self.probing = CircuitState.OPEN, now, False
        self.opened_total += 1
        self.attempts.clear()
        self.failures = 0

    def close(self) -> None:
        self.state, self.probing = CircuitState.CLOSED, False


class CircuitBreaker:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_open: Callable[[str, int], None] | None = None,
    ) -> None:
        self._clock = clock
        self._backends: dict[str, _Backend] = {}
        self.on_open = on_open
        """Told (backend `host:port`, open_ms) when a circuit opens here; must not block."""

    def opened_elsewhere(self, backend: str, open_ms: int) -> None:
        """Another replica saw this backend's circuit open: fail fast here too, for `open_ms`."""
        found = self._backends.get(backend)
        if found is None:
            found = self._backends[backend] = _Backend()
        if found.state is not CircuitState.CLOSED:
            return  # already open or probing here: this replica's own probe decides
        found.open(self._clock())
        logger.warning("the circuit of backend %s opened on another replica for %d ms", backend, open_ms)

    def states(self) -> dict[str, tuple[CircuitState, int]]:
        """Per backend: its state and how often its circuit opened (for metrics)."""
        return {key: (b.state, b.opened_total) for key, b in self._backends.items()}

    def state_of(self, backend: str) -> CircuitState:
        found = self._backends.get(backend)
        return CircuitState.CLOSED if found is None else found.state

    async def __call__(self, call: Call, next: Next) -> CallResult:
        binding = call.tool.binding
        if not isinstance(binding, HttpBinding):  # only HTTP backends are tracked here
            return await next(call)
        key = host_port(binding.base_url)
        backend = self._backends.get(key)
        if backend is None:
            backend = self._backends[key] = _Backend()
        circuit = call.manifest.circuit
        now = self._clock()
        if backend.state is CircuitState.OPEN:
            reopens_in_s = backend.opened_at + circuit.open_ms / 1000 - now
            if reopens_in_s > 0:
                return _refused(call, max(1, round(reopens_in_s * 1000)))
            backend.state = CircuitState.HALF_OPEN
        probe = backend.state is CircuitState.HALF_OPEN
        if probe:
            if backend.probing:
                return _refused(call, PROBE_RETRY_AFTER_MS)
            backend.probing = True
        budget_ms = call.remaining_s * 1000
        failed: bool | None = None
        try:
            result = await next(call)
            failed = _failed(result, budget_ms, call.manifest.limits.timeout_ms_default)
        finally:
            opened = backend.opened_total
            self._settle(backend, probe, failed, circuit)
            if backend.opened_total > opened:
                logger.warning("the circuit of backend %s opened for %d ms", key, circuit.open_ms)
                if self.on_open is not None:
                    self.on_open(key, circuit.open_ms)
        return result

    def _settle(self, backend: _Backend, probe: bool, failed: bool | None, circuit: Circuit) -> None:
        """Count one attempt; a probe decides the circuit, an attempt that says nothing is not counted."""
        if probe:
            backend.probing = False
            if failed is True:
                backend.open(self._clock())
            elif failed is False:
                backend.close()
        elif failed is not None and backend.state is CircuitState.CLOSED:
            backend.record(self._clock(), failed, circuit)


def _failed(result: CallResult, budget_ms: float, default_timeout_ms: int) -> bool | None:
    """True: the backend failed; False: it answered; None: the attempt says nothing about it."""
    if result.status in (CallStatus.SUCCESS, CallStatus.SUCCESS_PREP) or result.error is None:
        return False
    code = result.error.code
    if code in _FAILURES:
        return True
    if code == TIMEOUT:
        return True if budget_ms >= _FULL_TIME_SHARE * default_timeout_ms else None
    return None if code in _NEUTRAL or code == CIRCUIT_OPEN else False


def _refused(call: Call, retry_after_ms: int) -> CallResult:
    status, err = error(
        CIRCUIT_OPEN,
        f"the backend of '{call.tool.canonical_name}' keeps failing; it is not called for now",
        retry_after_ms=retry_after_ms,
    )
    return call.result(status, error=err)
