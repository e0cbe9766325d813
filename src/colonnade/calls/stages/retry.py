"""Retries: only retryable outcomes, only when repeating is safe, backoff with jitter, within the deadline.

Repeating is safe when the tool is pure or idempotent, or when the call carries an idempotency key
*and* the tool's contract declares that its backend deduplicates on it
(`runtime.deduplicates_idempotency_key`): the execute stage forwards the key as `Idempotency-Key`,
but a backend that ignores it would run a retry after an ambiguous failure (a cut connection after
the effect) as a second request, and pay twice. The rule is the idempotency stage's `may_repeat`,
so the two stages never disagree about what may run again.

The caller's `retry_policy` is a wish, clamped to the tool's manifest (`retry`): never more
attempts than `max_attempts`, never a wait shorter than `min_backoff_ms`, so no caller can turn
the gateway into a hammer on a failing backend. An open circuit is not retried: the breaker
below has said the backend is down.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus, RetryPolicy
from colonnade.calls.manifest import RetryLimits
from colonnade.calls.pipeline import Next
from colonnade.calls.stages.circuit import CIRCUIT_OPEN
from colonnade.calls.stages.deadline import execution_time_left
from colonnade.calls.stages.idempotency import may_repeat
from colonnade.contracts.model import Determinism

__all__ = ["DEFAULT_POLICY", "Retry", "backoff_ms", "clamp_policy", "may_retry"]

DEFAULT_POLICY = RetryPolicy(max_attempts=3, base_ms=100, cap_ms=2_000, jitter="full")


def may_retry(call: Call) -> bool:
    """Whether another attempt cannot add a second effect (a backend deduplicates only with a key)."""
    if call.request.constraints.idempotency_key is None:
        return call.manifest.determinism in (Determinism.PURE, Determinism.IDEMPOTENT)
    return may_repeat(call)


def clamp_policy(policy: RetryPolicy, limits: RetryLimits) -> tuple[RetryPolicy, str | None]:
    """The policy within the manifest's limits, and a note saying what changed (None: nothing)."""
    within = {
        "max_attempts": min(policy.max_attempts, limits.max_attempts),
        "base_ms": max(policy.base_ms, limits.min_backoff_ms),
        "cap_ms": max(policy.cap_ms, policy.base_ms, limits.min_backoff_ms),
    }
    if all(getattr(policy, name) == value for name, value in within.items()):
        return policy, None  # the common case: no copy on every call
    clamped = policy.model_copy(update=within)
    changes = [
        f"{name} {getattr(policy, name)} -> {getattr(clamped, name)}"
        for name in ("max_attempts", "base_ms")
        if getattr(policy, name) != getattr(clamped, name)
    ]
    note = "retry_policy clamped to the tool's manifest: " + ", ".join(changes)
    return clamped, note if changes else None


def backoff_ms(policy: RetryPolicy, attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff capped at cap_ms; `full` jitter draws uniformly below that ceiling."""
    ceiling = min(float(policy.cap_ms), policy.base_ms * (2.0 ** (attempt - 1)))
    return ceiling * rand() if policy.jitter == "full" else ceiling


class Retry:
    """Wraps execution; the last result is returned as is, with the number of attempts noted."""

    def __init__(
        self,
        rand: Callable[[], float] = random.random,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._rand = rand
        self._sleep = sleep

    async def __call__(self, call: Call, next: Next) -> CallResult:
        limits = call.manifest.retry
        asked = call.request.constraints.retry_policy
        policy, clamped = clamp_policy(asked or DEFAULT_POLICY, limits)
        clamped = clamped if asked is not None else None  # the default policy is ours, not a caller's wish
        attempts = policy.max_attempts if may_retry(call) else 1
        attempt = 1
        while True:
            result = await next(call)
            if result.status is not CallStatus.RETRYABLE_ERROR or attempt >= attempts:
                return _noted(result, attempt, clamped)
            if result.error is not None and result.error.code == CIRCUIT_OPEN:
                return _noted(result, attempt, clamped, "no retry: the backend's circuit is open")
            wait_ms = max(backoff_ms(policy, attempt, self._rand), float(limits.min_backoff_ms))
            hint = result.error.details.get("retry_after_ms") if result.error is not None else None
            if isinstance(hint, int | float):
                wait_ms = max(wait_ms, float(hint))
            if wait_ms / 1000 >= execution_time_left(call):
                why = "no retry: the next attempt would start past the deadline"
                return _noted(result, attempt, clamped, why)
            await self._sleep(wait_ms / 1000)
            attempt += 1


def _noted(result: CallResult, attempts: int, clamped: str | None, why: str | None = None) -> CallResult:
    if clamped is not None:
        result = result.model_copy(update={"warnings": [*result.warnings, clamped]})
    if attempts == 1 and why is None:
        return result
    warnings = [*result.warnings, f"attempts: {attempts}"] + ([why] if why else [])
    error = result.error
    if error is not None:
        error = error.model_copy(update={"details": {**error.details, "attempts": attempts}})
    return result.model_copy(update={"warnings": warnings, "error": error})
