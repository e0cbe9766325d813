"""Capacity: at most `concurrency_max` calls of a tool in flight; over it, fail fast and retryable.

The slots are the limiter's (`governance/limits`): counted in Redis across every replica when the
gateway shares state, in this process otherwise, and a replica's own share while Redis is away.
It sits after idempotency, so a replayed outcome takes no slot.
"""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next
from colonnade.governance.limits import BoundLimit, Limiter

__all__ = ["Capacity"]

RETRY_AFTER_MS = 100


class Capacity:
    def __init__(self, limiter: Limiter | None = None) -> None:
        self.limiter = limiter if limiter is not None else Limiter()

    async def __call__(self, call: Call, next: Next) -> CallResult:
        limit = call.manifest.limits.concurrency_max
        if limit is None:
            return await next(call)
        name = call.tool.canonical_name
        slot = BoundLimit(f"concurrency_max:{name}", "concurrency", limit, 0, f"c|concurrency_max|{name}")
        decision = await self.limiter.admit([slot], lease_ms=int(call.remaining_s * 1000))
        if decision.refused is not None:
            share = "" if decision.shared else " on this replica"
            status, err = error(
                "R-CAP-CONCURRENCY",
                f"'{name}' already has {decision.refused.limit} call(s) in flight{share} (concurrency_max)",
                retry_after_ms=RETRY_AFTER_MS,
                concurrency_max=limit,
            )
            return call.result(status, error=err)
        try:
            return await next(call)
        finally:
            await decision.release()
