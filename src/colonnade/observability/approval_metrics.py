"""Approval figures a dashboard needs: how many were asked for and how each ended, and how long a
decision took (from the request to the approver's answer, or to the expiry)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["APPROVAL_EVENTS", "DECISION_BUCKETS_S", "ApprovalMetrics"]

APPROVAL_EVENTS = ("requested", "approved", "denied", "expired")
DECISION_BUCKETS_S = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 14_400.0, 86_400.0)
"""A human decides in seconds to hours: the buckets span a minute's glance to a day's wait."""


class ApprovalMetrics:
    """`record(event, waited_s)` for each approval requested, approved, denied or expired."""

    def __init__(self, registry: CollectorRegistry) -> None:
        events = Counter(
            "colonnade_approvals",
            "Approvals by event: requested, then approved, denied or expired.",
            ["event"],
            registry=registry,
        )
        self._events = {event: events.labels(event) for event in APPROVAL_EVENTS}
        decided = Histogram(
            "colonnade_approval_decision_seconds",
            "From an approval's request to its decision (approved or denied) or expiry.",
            ["outcome"],
            buckets=DECISION_BUCKETS_S,
            registry=registry,
        )
        self._waits = {event: decided.labels(event) for event in APPROVAL_EVENTS[1:]}

    def record(self, event: str, waited_s: float | None = None) -> None:
        counter = self._events.get(event)
        if counter is None:
            return
        counter.inc()
        wait = self._waits.get(event)
        if wait is not None and waited_s is not None:
            wait.observe(max(waited_s, 0.0))
