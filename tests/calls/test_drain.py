"""The drain stage: calls run undisturbed until the cut; then they end retryable and new ones are refused."""

from __future__ import annotations

import asyncio

import pytest

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.stages.drain import Drain
from tests.support.stage_calls import answer, stage_call


async def test_calls_finish_normally_while_nothing_is_cut() -> None:
    drain = Drain()
    result = await drain(stage_call(), answer())
    assert result.status is CallStatus.SUCCESS
    assert drain.in_flight == 0


async def test_the_cut_ends_running_calls_with_a_retryable_code_and_refuses_later_ones() -> None:
    drain = Drain()
    started = asyncio.Event()
    reached_the_end = False

    async def backend(call: Call) -> CallResult:
        nonlocal reached_the_end
        started.set()
        await asyncio.Event().wait()  # a backend that never answers
        reached_the_end = True
        return call.result(CallStatus.SUCCESS)

    running = asyncio.create_task(drain(stage_call(), backend))
    await started.wait()
    assert drain.in_flight == 1
    assert drain.cut() == 1
    result = await running
    assert not reached_the_end
    assert result.status is CallStatus.RETRYABLE_ERROR
    assert result.error is not None and result.error.code == "R-CAP-SHUTTING-DOWN"
    assert result.error.details == {"retry_after_ms": 1_000, "interrupted": True}
    assert not running.cancelled()  # the surface's task lives on to send the answer

    later = await drain(stage_call(), answer())
    assert later.error is not None and later.error.code == "R-CAP-SHUTTING-DOWN"
    assert later.error.details["interrupted"] is False


async def test_the_calling_task_can_go_on_awaiting_after_a_cut() -> None:
    drain = Drain()

    async def surface() -> str:
        result = await drain(stage_call(), _hang)
        await asyncio.sleep(0)  # a cancellation left pending would raise here
        return result.error.code if result.error else ""

    task = asyncio.create_task(surface())
    await asyncio.sleep(0)
    drain.cut()
    assert await task == "R-CAP-SHUTTING-DOWN"


async def test_a_timeout_of_a_later_stage_is_not_mistaken_for_the_cut() -> None:
    drain = Drain()

    async def times_out(call: Call) -> CallResult:
        raise TimeoutError

    with pytest.raises(TimeoutError):
        await drain(stage_call(), times_out)


async def _hang(call: Call) -> CallResult:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")
