"""Two-phase stage: for tools that opt in, a successful execution becomes `success_prep` + token."""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next
from colonnade.calls.two_phase import TwoPhaseCoordinator

__all__ = ["TwoPhase"]


class TwoPhase:
    def __init__(self, coordinator: TwoPhaseCoordinator) -> None:
        self.coordinator = coordinator

    async def __call__(self, call: Call, next: Next) -> CallResult:
        if call.tool.runtime.two_phase is None:
            return await next(call)
        result = await next(call)
        if result.status is not CallStatus.SUCCESS:
            return result
        return await self.coordinator.prepare(call, result)
