"""CPU time of one coroutine, counted only while its own steps run on the event loop.

Timing a coroutine with the thread's CPU clock before and after would also count every other task
that ran while it waited. Driving the coroutine step by step and timing each step counts only
its own work, which is what `metrics.cpu_ms` of an in-process call promises; work a step hands to
a worker thread is measured there (`thread_cpu_ms`) and added by whoever handed it over.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

__all__ = ["CpuMeter", "thread_cpu_ms"]

T = TypeVar("T")


class CpuMeter:
    """`result = await meter.run(coroutine)`; `meter.ms` is then the CPU its steps took."""

    __slots__ = ("ms",)

    def __init__(self) -> None:
        self.ms = 0.0

    def run(self, awaitable: Awaitable[T]) -> Awaitable[T]:
        return _Timed(awaitable, self)


class _Timed(Awaitable[T]):
    __slots__ = ("_awaitable", "_meter")

    def __init__(self, awaitable: Awaitable[T], meter: CpuMeter) -> None:
        self._awaitable = awaitable
        self._meter = meter

    def __await__(self) -> Generator[Any, Any, T]:
        steps = self._awaitable.__await__()
        meter = self._meter
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            started = time.thread_time()
            try:
                yielded = steps.throw(thrown) if thrown is not None else steps.send(sent)
            except StopIteration as done:
                meter.ms += (time.thread_time() - started) * 1000
                return done.value  # type: ignore[no-any-return]
            except BaseException:
                meter.ms += (time.thread_time() - started) * 1000
                raise
            meter.ms += (time.thread_time() - started) * 1000
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:  # cancellation and the like go into the coroutine
                sent, thrown = None, exc


def thread_cpu_ms(work: Callable[[], T]) -> tuple[T, float]:
    """Run `work` in the current thread; its result and the thread CPU it took, in ms."""
    started = time.thread_time()
    result = work()
    return result, (time.thread_time() - started) * 1000
