"""The router's figures a dashboard needs: decisions, how many fell back, how confident, how long.

Fallback rate is `colonnade_routing_decisions_total{outcome="fallback"}` over all decisions; the
confidence histogram shows how close the router runs to `routing.confidence_threshold`. Selection
recall is `colonnade_routing_calls_total{shown="true"}` over all routed calls (the share of calls
whose tool the session's listing showed); selection precision is
`colonnade_routing_shown_called_total` over `colonnade_routing_shown_total` (the share of shown tools
then called, each once per listing), from real use (`routing_turns.py`).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["CONFIDENCE_BUCKETS", "RoutingMetrics"]

CONFIDENCE_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_SECONDS_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)


class RoutingMetrics:
    """`record(fallback, confidence, tools, seconds)` once per routing decision."""

    def __init__(self, registry: CollectorRegistry) -> None:
        decisions = Counter(
            "colonnade_routing_decisions",
            "Routing decisions by outcome: routed (the top tools) or fallback (confidence too low).",
            ["outcome"],
            registry=registry,
        )
        self._routed, self._fallback = decisions.labels("routed"), decisions.labels("fallback")
        self.confidence = Histogram(
            "colonnade_routing_confidence",
            "The router's confidence in each decision (0 to 1).",
            buckets=CONFIDENCE_BUCKETS,
            registry=registry,
        )
        self.tools = Histogram(
            "colonnade_routing_tools_shown",
            "Tools one decision shows the client.",
            buckets=(1, 2, 4, 8, 16, 32, 64),
            registry=registry,
        )
        routed_calls = Counter(
            "colonnade_routing_calls",
            "Calls of routed sessions, by whether their tool was in the session's last listing.",
            ["shown"],
            registry=registry,
        )
        self._shown_call, self._unshown_call = routed_calls.labels("true"), routed_calls.labels("false")
        self.shown = Counter(
            "colonnade_routing_shown",
            "Tools shown by routed listings (the denominator of selection precision).",
            registry=registry,
        )
        self.shown_called = Counter(
            "colonnade_routing_shown_called",
            "Shown tools then called in the same listing, each counted once (precision's numerator).",
            registry=registry,
        )
        self.seconds = Histogram(
            "colonnade_routing_duration_seconds",
            "Time to make one routing decision.",
            buckets=_SECONDS_BUCKETS,
            registry=registry,
        )

    def record(self, *, fallback: bool, confidence: float, tools: int, seconds: float) -> None:
        (self._fallback if fallback else self._routed).inc()
        self.confidence.observe(confidence)
        self.tools.observe(tools)
        self.seconds.observe(seconds)

    def record_shown(self, tools: int) -> None:
        """A routed listing showed `tools` tools."""
        self.shown.inc(tools)

    def record_called(self, *, shown: bool, first_of_shown: bool) -> None:
        """A routed session called a tool; `first_of_shown`: a shown tool's first call in its listing."""
        (self._shown_call if shown else self._unshown_call).inc()
        if first_of_shown:
            self.shown_called.inc()
