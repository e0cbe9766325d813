"""Admission control: the load monitor measures real work; the stage refuses what it cannot serve in time."""

from __future__ import annotations

import asyncio
import time

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.load import ARRIVAL, DEADLINE, IN_FLIGHT_LIMIT, LoadMonitor
from colonnade.calls.stages.admission import Admission
from tests.support.stage_calls import answer, stage_call


class Held:
    """A last stage that keeps every call in flight until released."""

    def __init__(self, expected: int) -> None:
        self.release = asyncio.Event()
        self.all_in = asyncio.Event()
        self.expected = expected
        self.entered = 0

    async def __call__(self, call: Call) -> CallResult:
        self.entered += 1
        if self.entered == self.expected:
            self.all_in.set()
        await self.release.wait()
        return call.result(CallStatus.SUCCESS)


async def _hold(stage: Admission, held: Held) -> list[asyncio.Task[CallResult]]:
    tasks = [asyncio.create_task(stage(stage_call(), held)) for _ in range(held.expected)]
    await held.all_in.wait()
    return tasks


async def test_a_call_that_the_work_in_front_would_make_late_is_refused_at_once() -> None:
    load = LoadMonitor()
    load.observe_service(0.010)  # 10 ms of event-loop time per request, as measured
    stage, held = Admission(load), Held(30)
    tasks = await _hold(stage, held)  # 30 calls in flight: about 300 ms of work in front

    reached: list[Call] = []

    async def backend(call: Call) -> CallResult:
        reached.append(call)
        return call.result(CallStatus.SUCCESS)

    tight = await stage(stage_call(timeout_ms=100), backend)
    assert reached == []
    assert tight.status is CallStatus.RETRYABLE_ERROR
    assert tight.error is not None and tight.error.code == "R-CAP-OVERLOAD"
    details = tight.error.details
    assert details["reason"] == DEADLINE
    assert details["predicted_wait_ms"] >= 300 and details["remaining_ms"] <= 100
    # the predicted wait (about 300 ms: a few more calls may count by now), spread from 0.5x to 1.5x
    wait = details["predicted_wait_ms"]
    assert 0.5 * wait - 1 <= details["retry_after_ms"] <= 1.5 * wait + 1
    assert load.shed == {DEADLINE: 1}

    roomy = await stage(stage_call(timeout_ms=2_000), backend)  # time enough: admitted
    assert roomy.status is CallStatus.SUCCESS and len(reached) == 1
    held.release.set()
    assert all(r.status is CallStatus.SUCCESS for r in await asyncio.gather(*tasks))
    assert load.calls_in_flight == 0


async def test_with_late_shedding_off_only_the_bound_refuses() -> None:
    load = LoadMonitor(max_in_flight=3, shed_late=False)
    load.observe_service(0.010)
    stage, held = Admission(load), Held(3)
    tasks = await _hold(stage, held)
    over = await stage(stage_call(timeout_ms=1), answer())
    assert over.error is not None and over.error.details["reason"] == IN_FLIGHT_LIMIT
    assert over.error.details["max_in_flight"] == 3
    held.release.set()
    await asyncio.gather(*tasks)
    assert (await stage(stage_call(timeout_ms=1), answer())).status is CallStatus.SUCCESS
    assert load.shed == {IN_FLIGHT_LIMIT: 1}


async def test_an_idle_gateway_admits_even_tight_deadlines() -> None:
    load = LoadMonitor()
    load.observe_service(0.002)
    result = await Admission(load)(stage_call(timeout_ms=5), answer())
    assert result.status is CallStatus.SUCCESS


async def test_the_monitor_measures_event_loop_lag_and_cpu_per_request() -> None:
    load = LoadMonitor(sample_s=0.01)
    async with load.sampling():
        await asyncio.sleep(0.03)  # let the sampler take its first samples
        arrival = load.edge_entered()
        _burn_cpu(0.3)  # 300 ms of CPU on the loop thread, which blocks the loop meanwhile
        load.edge_left(arrival)
        await asyncio.sleep(0.001)  # the sampler's timer, 290 ms late, runs now
        lag_after_the_block = load.loop_lag_s
        await asyncio.sleep(0.02)
    assert lag_after_the_block > 0.02  # one late sample moves the lag's average a tenth of the way
    assert load.cpu_per_request_s > 0.15
    assert load.service_s >= load.cpu_per_request_s
    assert load.predicted_wait_s() == load.loop_lag_s  # nothing in flight: only the lag


async def test_requests_refused_at_the_edge_do_not_dilute_the_cpu_estimate() -> None:
    load = LoadMonitor(sample_s=0.01)
    async with load.sampling():
        await asyncio.sleep(0.03)
        served = load.edge_entered()
        _burn_cpu(0.02)
        for _ in range(50):
            load.edge_left(load.edge_entered(), served=False)
        load.edge_left(served)
        await asyncio.sleep(0.03)
    assert load.cpu_per_request_s > 0.01  # one served request, not 51


def _burn_cpu(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_while_the_loop_is_busy_or_starved_the_wall_time_per_answer_is_the_service_time() -> None:
    load = LoadMonitor()
    load.observe_service(0.002)  # the loop kept up: its CPU per answer
    assert load.service_s == 0.002
    load.observe_service(0.002, wall_s=0.012)  # busy throughout: 12 ms of wall time per answer
    assert load.service_s > 0.002
    for _ in range(20):
        load.observe_service(0.002, wall_s=0.012)
    assert abs(load.service_s - 0.012) < 0.001
    assert abs(load.cpu_per_request_s - 0.002) < 1e-9


async def test_a_call_refused_at_the_edge_of_the_pipeline_is_marked_so_on_its_arrival() -> None:
    load = LoadMonitor()
    load.observe_service(0.010)
    stage, held = Admission(load), Held(20)
    tasks = await _hold(stage, held)
    arrival = load.edge_entered()
    token = ARRIVAL.set(arrival)
    try:
        refused = await stage(stage_call(timeout_ms=50), answer())
    finally:
        ARRIVAL.reset(token)
    load.edge_left(arrival)
    assert refused.error is not None and refused.error.code == "R-CAP-OVERLOAD"
    assert arrival.refused and not arrival.open
    assert load.latency_s == 0.0  # a refusal is not a served call: no latency, no answer counted
    held.release.set()
    await asyncio.gather(*tasks)


async def test_time_waited_in_front_of_the_pipeline_counts_against_a_relative_timeout() -> None:
    load = LoadMonitor()
    load.observe_service(0.001)  # 1 ms per request in flight: alone, a call waits 1 ms
    stage = Admission(load)
    arrival = load.edge_entered()
    arrival.at -= 0.5  # this request reached the edge 500 ms ago
    token = ARRIVAL.set(arrival)
    try:
        late = await stage(stage_call(timeout_ms=300), answer())
        absolute = await stage(stage_call(deadline_unix_ms=int(time.time() * 1000) + 300), answer())
    finally:
        ARRIVAL.reset(token)
        load.edge_left(arrival)
    assert late.error is not None and late.error.details["remaining_ms"] < 0
    assert absolute.status is CallStatus.SUCCESS  # an absolute deadline already counts the wait


async def test_requests_read_but_not_yet_started_are_in_front_of_a_new_call() -> None:
    load = LoadMonitor()
    load.observe_service(0.01)  # 10 ms per request in flight
    stage = Admission(load)
    alone = await stage(stage_call(timeout_ms=300), answer())
    for _ in range(40):  # 40 requests read in one turn of the loop, their tasks not started yet
        load.request_read()
    behind = await stage(stage_call(timeout_ms=300), answer())
    for _ in range(40):
        load.request_started()
    assert alone.status is CallStatus.SUCCESS
    assert behind.error is not None and behind.error.code == "R-CAP-OVERLOAD"
    assert behind.error.details["predicted_wait_ms"] >= 400 and load.waiting == 0
