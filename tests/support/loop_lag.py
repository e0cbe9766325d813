"""How late the event loop runs what is due: the part of a call's lateness the machine, not the code, caused.

A deadline check with a fixed slack measures the machine as much as the pipeline: on a loaded shared
2-core machine the loop itself starts due callbacks hundreds of milliseconds late. A sampler beside the
calls records that lag, and a test adds the worst lag seen to its slack; on a quiet machine the lag is a
few milliseconds and the check keeps its strength, and a call that ignores its deadline is still late by
far more than any lag.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

__all__ = ["LoopLag", "loop_lag"]

_TICK_S = 0.005


class LoopLag:
    def __init__(self) -> None:
        self.worst_ms = 0.0
        self.samples = 0

    async def _sample(self) -> None:
        while True:
            due = time.perf_counter() + _TICK_S
            await asyncio.sleep(_TICK_S)
            self.worst_ms = max(self.worst_ms, (time.perf_counter() - due) * 1000)
            self.samples += 1


@contextlib.asynccontextmanager
async def loop_lag() -> AsyncIterator[LoopLag]:
    """Sample the running loop's lag while the body runs."""
    lag = LoopLag()
    task = asyncio.create_task(lag._sample())
    try:
        yield lag
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
