"""The limiter: counts each call against the limits it falls under, across replicas when it can.

With Redis (`shared_state.redis_url`) every replica counts in the same Redis counters, so a
limit holds for the whole deployment. When Redis is unreachable no call fails for it: each
replica counts in its own process against its share of each limit (`limit // replicas`, at least
1), where `replicas` is `limits.replicas` or the live replicas last counted in Redis. The switch
both ways is logged once and shown in `/v1/status`; the shared counts resume when Redis answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from colonnade.config import LimitsSettings
from colonnade.governance.limits.rules import BoundLimit, LimitKind, LimitRule, compile_rules
from colonnade.governance.principal import Principal
from colonnade.shared_state.counters import (
    Counters,
    CounterVerdict,
    LocalCounters,
    SlotCheck,
    Usage,
    WindowCheck,
)
from colonnade.shared_state.link import SharedStateUnavailable
from colonnade.shared_state.replicas import ReplicaSet

__all__ = ["LimitDecision", "LimitUsage", "Limiter"]

logger = logging.getLogger(__name__)

LEASE_GRACE_MS = 5_000
"""How long past a call's deadline its slot outlives a replica that died holding it."""


class LimitUsage(NamedTuple):
    """Where a call left one limit: what REST's `RateLimit-Policy` and `RateLimit` headers say."""

    name: str
    kind: LimitKind
    limit: int
    """The limit as enforced now (a replica's local share while Redis is away)."""
    window_s: float | None
    remaining: int
    reset_s: float


@dataclass(frozen=True, slots=True)
class LimitDecision:
    """The verdict on one call: `refused` is the limit without room (None: admitted)."""

    refused: LimitUsage | None
    retry_after_ms: int
    usage: tuple[LimitUsage, ...]
    shared: bool
    _release: tuple[Counters, tuple[SlotCheck, ...], str] | None = None

    async def release(self) -> None:
        """Give back the slots this call holds (a Redis that is away lets their leases end them)."""
        if self._release is None:
            return
        counters, slots, holder = self._release
        try:
            await counters.release(slots, holder)
        except SharedStateUnavailable:
            logger.debug("slots of %s not released: Redis is away; their leases end them", holder)


class Limiter:
    """`await limiter.admit(principal, tool, extra)`; release the decision's slots when the call ends."""

    def __init__(
        self,
        settings: LimitsSettings | None = None,
        *,
        shared: Counters | None = None,
        replicas: ReplicaSet | None = None,
        shared_available: Callable[[], bool] = lambda: True,
    ) -> None:
        self.settings = settings if settings is not None else LimitsSettings()
        self.rules: tuple[LimitRule, ...] = compile_rules(self.settings.rules)
        self._shared = shared
        self._replicas = replicas
        self._available = shared_available
        self._local = LocalCounters()
        self._degraded = False
        self.refused: dict[str, int] = {}
        self.admitted: dict[str, int] = {}
        self.use: dict[str, float] = {}
        """Per limit: used/limit of the count the latest admitted call fell under."""

    @property
    def backend(self) -> str:
        return "redis" if self._shared is not None else "process"

    @property
    def degraded(self) -> bool:
        """True while Redis is configured but away: this replica enforces its local share."""
        return self._shared is not None and (self._degraded or not self._available())

    def replicas(self) -> tuple[int, str]:
        """How many replicas share each limit while Redis is away, and where that number comes from."""
        if self.settings.replicas is not None:
            return self.settings.replicas, "setting"
        if self._replicas is not None and self._replicas.live is not None:
            return max(1, self._replicas.live), "heartbeat"
        return 1, "default"

    def bind(self, principal: Principal, tool: str) -> list[BoundLimit]:
        """The configured limits this call falls under."""
        return [bound for rule in self.rules for bound in rule.bind(principal, tool)]

    async def admit(self, bound: Sequence[BoundLimit], *, lease_ms: int) -> LimitDecision:
        """Count the call under every bound limit, or refuse it with the first that has no room."""
        windows = [b for b in bound if b.kind == "requests"]
        slots = [b for b in bound if b.kind != "requests"]
        ordered = [*windows, *slots]
        window_checks = [WindowCheck(b.key, b.limit, b.window_ms) for b in windows]
        slot_checks = [SlotCheck(b.key, b.limit, lease_ms + LEASE_GRACE_MS) for b in slots]
        if self._shared is not None:
            try:
                verdict = await self._shared.take(window_checks, slot_checks)
            except SharedStateUnavailable as exc:
                self._enter_degraded(exc)
            else:
                self._leave_degraded()
                return self._decide(ordered, verdict, self._shared, slot_checks, share=1)
        share = self.replicas()[0] if self._shared is not None else 1
        local_windows, local_slots = window_checks, slot_checks
        if share > 1:
            local_windows = [WindowCheck(c.key, _share(c.limit, share), c.window_ms) for c in window_checks]
            local_slots = [SlotCheck(c.key, _share(c.limit, share), c.lease_ms) for c in slot_checks]
        verdict = self._local.take_now(local_windows, local_slots)
        return self._decide(ordered, verdict, self._local, local_slots, share=share)

    def status(self) -> dict[str, Any]:
        """What `/v1/status` shows under `limits`."""
        replicas, source = self.replicas()
        return {
            "rules": [rule.name for rule in self.rules],
            "backend": self.backend,
            "degraded": self.degraded,
            "enforcing": self._enforcing(),
            "replicas": replicas,
            "replicas_from": source,
            "local_share": f"1/{replicas}" if self.degraded else None,
            "refused": dict(sorted(self.refused.items())),
        }

    def _enforcing(self) -> str:
        if self._shared is None:
            return "process"
        return "local share" if self.degraded else "shared"

    def _decide(
        self,
        ordered: Sequence[BoundLimit],
        verdict: CounterVerdict,
        counters: Counters,
        slots: Sequence[SlotCheck],
        *,
        share: int,
    ) -> LimitDecision:
        usage = tuple(
            [_usage(b, u, _share(b.limit, share)) for b, u in zip(ordered, verdict.usage, strict=True)]
        )
        if verdict.refused is not None:
            refused = usage[verdict.refused]
            self.refused[refused.name] = self.refused.get(refused.name, 0) + 1
            return LimitDecision(refused, verdict.retry_after_ms, usage, counters is self._shared)
        for item in usage:
            self.admitted[item.name] = self.admitted.get(item.name, 0) + 1
            self.use[item.name] = (item.limit - item.remaining) / item.limit
        release = (counters, tuple(slots), verdict.holder) if slots else None
        return LimitDecision(None, 0, usage, counters is self._shared, release)

    def _enter_degraded(self, exc: SharedStateUnavailable) -> None:
        if self._degraded:
            return
        self._degraded = True
        replicas, source = self.replicas()
        logger.warning(
            "rate limits degraded: Redis is unreachable (%s); this replica enforces 1/%d of each limit "
            "(replicas from %s) until Redis answers again",
            exc,
            replicas,
            source,
        )

    def _leave_degraded(self) -> None:
        if self._degraded:
            self._degraded = False
            logger.warning("rate limits shared again: Redis answers, every replica counts in it")


def _usage(bound: BoundLimit, used: Usage, limit: int) -> LimitUsage:
    window_s = bound.window_ms / 1000 if bound.kind == "requests" else None
    return LimitUsage(
        bound.name, bound.kind, limit, window_s, max(0, limit - used.used), used.reset_ms / 1000
    )


def _share(limit: int, replicas: int) -> int:
    return max(1, limit // replicas)
