"""The call pipeline: one ordered list of stages with one signature; the order lives here only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult

__all__ = ["Next", "Pipeline", "Stage"]

Next = Callable[[Call], Awaitable[CallResult]]


class Stage(Protocol):
    """A stage ends the call by returning a CallResult, or passes it on with `await next(call)`."""

    async def __call__(self, call: Call, next: Next) -> CallResult: ...


class Pipeline:
    """Runs the stages in order; the last stage must end every call it receives."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        if not stages:
            raise ValueError("a pipeline needs at least one stage")
        self.stages = tuple(stages)
        self._entry = self._chain(0)

    def _chain(self, index: int) -> Next:
        """The entry of stage `index`: a plain function handing the stage its call and the next entry.

        Not a coroutine of its own: every call passes every stage, and a wrapper coroutine per stage
        would add a frame to create and to resume through each time the call waits on I/O.
        """
        stage = self.stages[index]
        following = _past_the_end if index == len(self.stages) - 1 else self._chain(index + 1)

        def step(call: Call) -> Awaitable[CallResult]:
            return stage(call, following)

        return step

    async def run(self, call: Call) -> CallResult:
        return await self._entry(call)

    async def drain(self) -> None:
        """Let stages finish work they do after answering (e.g. storing outcomes) before shutdown."""
        for stage in self.stages:
            drain = getattr(stage, "drain", None)
            if drain is not None:
                await drain()


async def _past_the_end(call: Call) -> CallResult:
    raise RuntimeError(f"the last pipeline stage passed call {call.request.call_id} on; it must end it")
