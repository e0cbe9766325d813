"""The circuit breaker opens on a failing backend, fails fast while open, probes once, and closes again.

Unit tests of the stage with a fake last stage and a clock the test moves; the retry tests at the
end run Retry -> CircuitBreaker -> a failing last stage, as the default pipeline orders them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus, RetryPolicy
from colonnade.calls.manifest import Circuit, ManifestOverride
from colonnade.calls.pipeline import Next, Pipeline
from colonnade.calls.stages.circuit import CIRCUIT_OPEN, CircuitBreaker, CircuitState
from colonnade.calls.stages.retry import Retry
from tests.support.stage_calls import BACKEND, answer, failure, stage_call

TIGHT = ManifestOverride(circuit=Circuit(window_ms=10_000, min_attempts=4, failure_ratio=0.75, open_ms=1_000))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _run(breaker: CircuitBreaker, last: Next, **constraints: Any) -> CallResult:
    return await breaker(stage_call(override=TIGHT, **constraints), last)


async def _open(breaker: CircuitBreaker) -> None:
    for _ in range(4):
        await _run(breaker, failure("R-UPSTREAM-UNAVAILABLE"))
    assert breaker.state_of(BACKEND) is CircuitState.OPEN


async def test_a_failing_backend_opens_and_then_fails_fast_without_being_called() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock)
    for _ in range(3):
        result = await _run(breaker, failure("R-UPSTREAM-CONNECT"))
        assert result.error is not None and result.error.code == "R-UPSTREAM-CONNECT"
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED
    await _run(breaker, failure("R-UPSTREAM-CONNECT"))  # the 4th failure of 4: ratio 1.0 >= 0.75

    called: list[Call] = []

    async def backend(call: Call) -> CallResult:
        called.append(call)
        return call.result(CallStatus.SUCCESS)

    clock.now += 0.4
    refused = await breaker(stage_call(override=TIGHT), backend)
    assert called == []
    assert refused.status is CallStatus.RETRYABLE_ERROR
    assert refused.error is not None and refused.error.code == CIRCUIT_OPEN
    assert "backend" not in refused.error.details and BACKEND not in refused.error.message
    assert refused.error.details["retry_after_ms"] == 600
    assert breaker.states() == {BACKEND: (CircuitState.OPEN, 1)}


async def test_a_backend_that_mostly_answers_keeps_its_circuit_closed() -> None:
    breaker = CircuitBreaker(Clock())
    for n in range(40):  # half the attempts fail: below the 0.75 ratio
        last = failure("R-UPSTREAM-UNAVAILABLE") if n % 2 else answer()
        await _run(breaker, last)
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED


async def test_client_errors_and_rate_limits_mean_the_backend_answers() -> None:
    breaker = CircuitBreaker(Clock())
    for code in ("I-REQ-UPSTREAM-REJECTED", "I-REQ-UPSTREAM-NOT-FOUND", "R-UPSTREAM-429", "A-AUTH-UPSTREAM"):
        for _ in range(4):
            await _run(breaker, failure(code))
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED


async def test_attempts_age_out_of_the_window() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock)
    for _ in range(3):
        await _run(breaker, failure("R-UPSTREAM-UNAVAILABLE"))
    clock.now += 11  # past window_ms: those three no longer count
    await _run(breaker, failure("R-UPSTREAM-UNAVAILABLE"))
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED


async def test_after_the_cool_down_one_probe_goes_through_and_its_success_closes() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock)
    await _open(breaker)
    clock.now += 1.0
    release = asyncio.Event()

    async def slow_success(call: Call) -> CallResult:
        await release.wait()
        return call.result(CallStatus.SUCCESS)

    probe = asyncio.create_task(_run(breaker, slow_success))
    await asyncio.sleep(0)
    assert breaker.state_of(BACKEND) is CircuitState.HALF_OPEN
    meanwhile = await _run(breaker, answer())
    assert meanwhile.error is not None and meanwhile.error.code == CIRCUIT_OPEN  # one probe at a time
    release.set()
    assert (await probe).status is CallStatus.SUCCESS
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED
    assert (await _run(breaker, answer())).status is CallStatus.SUCCESS


async def test_a_failed_probe_opens_the_circuit_again() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock)
    await _open(breaker)
    clock.now += 1.0
    await _run(breaker, failure("S-TOOL-UPSTREAM-FAULT"))
    assert breaker.states() == {BACKEND: (CircuitState.OPEN, 2)}
    refused = await _run(breaker, answer())
    assert refused.error is not None and refused.error.details["retry_after_ms"] == 1_000


async def test_a_cancelled_probe_lets_the_next_call_probe() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock)
    await _open(breaker)
    clock.now += 1.0

    async def hangs(call: Call) -> CallResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    probe = asyncio.create_task(_run(breaker, hangs))
    await asyncio.sleep(0)
    probe.cancel()
    await asyncio.gather(probe, return_exceptions=True)
    assert (await _run(breaker, answer())).status is CallStatus.SUCCESS
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED


async def test_a_timeout_counts_only_when_the_backend_had_the_tools_full_time() -> None:
    breaker = CircuitBreaker(Clock())
    for _ in range(8):  # callers' own short deadlines: say nothing about the backend
        await _run(breaker, failure("R-TIMEOUT-001"), timeout_ms=50)
    assert breaker.state_of(BACKEND) is CircuitState.CLOSED
    for _ in range(4):  # the tool's default timeout (30 s) ran out: the backend hangs
        await _run(breaker, failure("R-TIMEOUT-001"))
    assert breaker.state_of(BACKEND) is CircuitState.OPEN


async def test_retries_count_as_attempts_and_an_open_circuit_is_not_retried() -> None:
    attempts: list[float] = []
    waits: list[float] = []

    async def down(call: Call) -> CallResult:
        attempts.append(call.remaining_s)
        return await failure("R-UPSTREAM-UNAVAILABLE")(call)

    async def no_sleep(seconds: float) -> None:
        waits.append(seconds)

    breaker = CircuitBreaker(Clock())
    pipeline = Pipeline([Retry(rand=lambda: 0.0, sleep=no_sleep), breaker, _Last(down)])
    generous = RetryPolicy(max_attempts=10, base_ms=1, cap_ms=1, jitter="full")
    first = await pipeline.run(
        stage_call(override=TIGHT.model_copy(update={"retry": None}), retry_policy=generous)
    )
    # The manifest allows 3 attempts: 3 failures. The second call's first failure is the 4th: open.
    assert len(attempts) == 3 and first.error is not None and first.error.details["attempts"] == 3
    second = await pipeline.run(stage_call(override=TIGHT, retry_policy=generous))
    assert len(attempts) == 4
    assert second.error is not None and second.error.code == CIRCUIT_OPEN
    assert "no retry: the backend's circuit is open" in second.warnings


class _Last:
    """Adapts a last-stage function to the stage signature."""

    def __init__(self, answer: Next) -> None:
        self._answer = answer

    async def __call__(self, call: Call, next: Next) -> CallResult:
        return await self._answer(call)
