"""When to try a retryable call again: never sooner than the gateway asks, never past the budget.

Full jitter (a random delay up to the exponential bound) keeps many agents that failed together
from coming back together; `retry_after_ms` from the answer is a floor, because the gateway knows
when the lease, the circuit or the rate window ends. The budget bounds the whole call, attempts
and waits included: a retry that could not finish in time is not started.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass(frozen=True, slots=True)
class Backoff:
    max_attempts: int = 5
    base_s: float = 0.1
    cap_s: float = 5.0
    budget_s: float = 30.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int, retry_after_ms: float | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempts count from 1)."""
        bound = min(self.cap_s, self.base_s * 2 ** (attempt - 1))
        jittered = self.rng.uniform(0, bound)
        floor = (retry_after_ms or 0) / 1000
        return max(floor, jittered)

    def allows(self, attempt: int, waited_s: float, next_delay_s: float) -> bool:
        """Whether another attempt may start after `attempt` attempts and `waited_s` seconds so far."""
        return attempt < self.max_attempts and waited_s + next_delay_s < self.budget_s
