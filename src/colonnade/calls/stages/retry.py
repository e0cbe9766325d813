"""Retries: only retryable outcomes, only when repeating is safe, backoff with jitter, within the deadline.

Repeating is safe when the tool is pure or idempotent, or when the call carries an idempotency key
(which the execute stage forwards to the backend as `Idempotency-Key`, so the backend can tell a
retry from a new request after an ambiguous failure such as a reset connection).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus, RetryPolicy
from colonnade.calls.pipeline import Next
from colonnade.contracts.model import Determinism

__all__ = ["DEFAULT_POLICY", "Retry", "backoff_ms", "may_retry"]

DEFAULT_POLICY = RetryPolicy(max_attempts=3, base_ms=100, cap_ms=2_000, jitter="full")


def may_retry(call: Call) -> bool:
    safe = call.manifest.determinism in (Determinism.PURE, Determinism.IDEMPOTENT)
    return safe or call.request.constraints.idempotency_key is not None


def backoff_ms(policy: RetryPolicy, attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff capped at cap_ms; `full` jitter draws uniformly below that ceiling."""
    ceiling = min(float(policy.cap_ms), policy.base_ms * (2.0 ** (attempt - 1)))
    return ceiling * rand() if policy.jitter == "full" else ceiling


class Retry:
    """Wraps execution; the last result is returned as is, with the number of attempts noted."""

    def __init__(self, rand: Callable[[], float] = random.random) -> None:
        self._rand = rand

    async def __call__(self, call: Call, next: Next) -> CallResult:
        policy = call.request.constraints.retry_policy or DEFAULT_POLICY
        attempts = policy.max_attempts if may_retry(call) else 1
        attempt = 1
        while True:
            result = await next(call)
            if result.status is not CallStatus.RETRYABLE_ERROR or attempt >= attempts:
                return _noted(result, attempt)
            wait_ms = backoff_ms(policy, attempt, self._rand)
            hint = result.error.details.get("retry_after_ms") if result.error is not None else None
            if isinstance(hint, int | float):
                wait_ms = max(wait_ms, float(hint))
            if wait_ms / 1000 >= call.remaining_s:
                return _noted(result, attempt, "no retry: the next attempt would start past the deadline")
            await asyncio.sleep(wait_ms / 1000)
            attempt += 1


def _noted(result: CallResult, attempts: int, why: str | None = None) -> CallResult:
    if attempts == 1 and why is None:
        return result
    warnings = [*result.warnings, f"attempts: {attempts}"] + ([why] if why else [])
    error = result.error
    if error is not None:
        error = error.model_copy(update={"details": {**error.details, "attempts": attempts}})
    return result.model_copy(update={"warnings": warnings, "error": error})
