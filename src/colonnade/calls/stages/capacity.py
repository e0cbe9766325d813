"""Capacity: at most `concurrency_max` calls of a tool in flight; over it, fail fast and retryable."""

from __future__ import annotations

from collections import defaultdict

from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next

__all__ = ["Capacity"]

RETRY_AFTER_MS = 100


class Capacity:
    def __init__(self) -> None:
        self._in_flight: defaultdict[str, int] = defaultdict(int)

    def in_flight(self, tool: str) -> int:
        return self._in_flight[tool]

    async def __call__(self, call: Call, next: Next) -> CallResult:
        limit = call.manifest.limits.concurrency_max
        if limit is None:
            return await next(call)
        name = call.tool.canonical_name
        if self._in_flight[name] >= limit:
            status, err = error(
                "R-CAP-CONCURRENCY",
                f"'{name}' already has {limit} call(s) in flight (concurrency_max)",
                retry_after_ms=RETRY_AFTER_MS,
                concurrency_max=limit,
            )
            return call.result(status, error=err)
        self._in_flight[name] += 1
        try:
            return await next(call)
        finally:
            self._in_flight[name] -= 1
