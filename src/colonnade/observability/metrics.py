"""Prometheus metrics of one gateway, in its own registry.

A dedicated `CollectorRegistry` (never the global one) lets tests and several gateways share a
process. Label values come only from the catalog and the error registry, never from callers: a
request naming no known tool is counted under `UNRESOLVED_TOOL`, so a caller cannot grow the
number of series. Per-tool children are created on first use and cached, so recording a call
is a few dictionary lookups and lock-protected additions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Sized
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from colonnade.observability.approval_metrics import ApprovalMetrics
from colonnade.observability.consumer_metrics import ConsumerLabel, ConsumerMetrics
from colonnade.observability.routing_metrics import RoutingMetrics

__all__ = [
    "DURATION_BUCKETS_S",
    "UNRESOLVED_TOOL",
    "CircuitView",
    "GatewayMetrics",
    "LimitsView",
    "LoadView",
    "SessionView",
    "ToolMetrics",
]

DURATION_BUCKETS_S = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)
UNRESOLVED_TOOL = "(unresolved)"


class ToolMetrics:
    """The series of one tool; `record` is called once per finished call."""

    __slots__ = ("_by_outcome", "_by_status", "_calls", "_durations", "_slo", "_tool", "in_flight")

    def __init__(
        self, tool: str, calls: Counter, durations: Histogram, in_flight: Gauge, slo: _SloSeries | None = None
    ) -> None:
        self._tool = tool
        self._calls = calls
        self._durations = durations
        self._slo = slo
        self.in_flight = in_flight.labels(tool)
        self._by_outcome: dict[tuple[str, str], Counter] = {}
        self._by_status: dict[str, Histogram] = {}

    def record(self, status: str, code: str, seconds: float, *, slo_p95_s: float | None = None) -> None:
        """One finished call; with the tool's p95 objective, a call slower than it is counted too."""
        counter = self._by_outcome.get((status, code))
        if counter is None:
            counter = self._by_outcome[(status, code)] = self._calls.labels(self._tool, status, code)
        counter.inc()
        histogram = self._by_status.get(status)
        if histogram is None:
            histogram = self._by_status[status] = self._durations.labels(self._tool, status)
        histogram.observe(seconds)
        if slo_p95_s is not None and self._slo is not None:
            self._slo.observe(self._tool, seconds, slo_p95_s)


class _SloSeries:
    """The p95 objective per tool and the calls slower than it: 5 % over it breaks the objective."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.target = Gauge(
            "colonnade_tool_slo_p95_seconds",
            "A tool's p95 latency objective (organ cards, manifests); compare with the call duration's p95.",
            ["tool"],
            registry=registry,
        )
        self.over = Counter(
            "colonnade_calls_over_slo",
            "Finished calls slower than their tool's p95 objective (more than 5 % of calls breaks it).",
            ["tool"],
            registry=registry,
        )
        self._known: dict[str, float] = {}

    def observe(self, tool: str, seconds: float, target_s: float) -> None:
        if self._known.get(tool) != target_s:
            self._known[tool] = target_s
            self.target.labels(tool).set(target_s)
            self.over.labels(tool)  # the series exists (at 0) once the tool has an objective
        if seconds > target_s:
            self.over.labels(tool).inc()


class GatewayMetrics:
    """Calls by tool/status/code, call latency, calls in flight, catalog size; admission load, circuits."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.calls = Counter(
            "colonnade_calls",
            "Finished tool calls by tool (canonical name), outcome status and error code ('' on success).",
            ["tool", "status", "code"],
            registry=self.registry,
        )
        self.call_duration = Histogram(
            "colonnade_call_duration_seconds",
            "Time from the start of the call pipeline to the call's result.",
            ["tool", "status"],
            buckets=DURATION_BUCKETS_S,
            registry=self.registry,
        )
        self.calls_in_flight = Gauge(
            "colonnade_calls_in_flight",
            "Tool calls inside the pipeline right now.",
            ["tool"],
            registry=self.registry,
        )
        self.catalog_tools = Gauge(
            "colonnade_catalog_tools", "Tools the catalog serves.", registry=self.registry
        )
        self.slo = _SloSeries(self.registry)
        self.consumers: ConsumerMetrics | None = None
        self.routing: RoutingMetrics | None = None
        self.approvals: ApprovalMetrics | None = None
        self._tools: dict[str, ToolMetrics] = {}

    def track_consumers(self, labels: Sequence[ConsumerLabel], *, max_values: int = 100) -> ConsumerMetrics:
        """Count calls per tool version and consumer too (`ConsumerMetrics`); once per registry."""
        if self.consumers is None:
            self.consumers = ConsumerMetrics(self.registry, labels, max_values=max_values)
        return self.consumers

    def for_tool(self, tool: str) -> ToolMetrics:
        """The cached series of one tool (created on first use)."""
        meters = self._tools.get(tool)
        if meters is None:
            meters = self._tools.setdefault(
                tool, ToolMetrics(tool, self.calls, self.call_duration, self.calls_in_flight, self.slo)
            )
        return meters

    def track_routing(self) -> RoutingMetrics:
        """The router's series (`RoutingMetrics`), created once per registry."""
        if self.routing is None:
            self.routing = RoutingMetrics(self.registry)
        return self.routing

    def track_approvals(self) -> ApprovalMetrics:
        """The approvals' series (`ApprovalMetrics`), created once per registry."""
        if self.approvals is None:
            self.approvals = ApprovalMetrics(self.registry)
        return self.approvals

    def track_catalog(self, catalog: Sized) -> None:
        """Report the catalog's size at every scrape (no bookkeeping on catalog changes)."""
        self.catalog_tools.set_function(lambda: len(catalog))

    def track_load(self, load: LoadView) -> None:
        """Report admission control's measurements at every scrape (read, never pushed)."""
        self.registry.register(_LoadCollector(load))

    def track_sessions(self, sessions: SessionView) -> None:
        """Report the MCP sessions held and closed for room at every scrape."""
        self.registry.register(_SessionCollector(sessions))

    def track_circuits(self, circuits: CircuitView) -> None:
        """Report each backend's circuit at every scrape."""
        self.registry.register(_CircuitCollector(circuits))

    def track_sandboxes(self, sandboxes: SandboxView) -> None:
        """Report how often each stdio server's sandbox ended its process, by kind, at every scrape."""
        self.registry.register(_SandboxCollector(sandboxes))

    def track_limits(self, limits: LimitsView) -> None:
        """Report each rate limit's refusals and use at every scrape (read, never pushed)."""
        self.registry.register(_LimitsCollector(limits))


class SessionView(Protocol):
    """The MCP session ledger (`surfaces/mcp/sessions.py`): held, callers, closed for room, refused."""

    evicted: int
    refused: int

    @property
    def callers(self) -> int: ...

    def held(self, owner: str | None = None) -> int: ...


class LoadView(Protocol):
    """What admission control measures (`calls/load.py`)."""

    loop_lag_s: float
    cpu_per_request_s: float
    service_s: float
    latency_s: float
    max_in_flight: int | None

    @property
    def in_flight(self) -> int: ...

    @property
    def shed(self) -> Mapping[str, int]: ...

    def predicted_wait_s(self) -> float: ...


class CircuitView(Protocol):
    """The circuit breaker's state per backend `host:port`: (state 0/1/2, times opened)."""

    def states(self) -> Mapping[str, tuple[int, int]]: ...


class LimitsView(Protocol):
    """The rate limiter (`governance/limits`): per limit name, calls admitted and refused, latest use."""

    @property
    def admitted(self) -> Mapping[str, int]: ...

    @property
    def refused(self) -> Mapping[str, int]: ...

    @property
    def use(self) -> Mapping[str, float]: ...

    @property
    def degraded(self) -> bool: ...


class _LimitsCollector(Collector):
    def __init__(self, limits: LimitsView) -> None:
        self._limits = limits

    def collect(self) -> Iterator[Metric]:
        limits = self._limits
        refused = CounterMetricFamily(
            "colonnade_rate_limit_refused",
            "Calls refused with R-CAP-RATE-LIMITED (or R-CAP-CONCURRENCY for concurrency_max), by limit.",
            labels=["limit"],
        )
        admitted = CounterMetricFamily(
            "colonnade_rate_limit_admitted",
            "Calls counted under a limit and let through, by limit.",
            labels=["limit"],
        )
        use = GaugeMetricFamily(
            "colonnade_rate_limit_use_ratio",
            "Used share (0-1) of the count the latest admitted call fell under, by limit.",
            labels=["limit"],
        )
        for name in sorted({*limits.admitted, *limits.refused}):
            refused.add_metric([name], limits.refused.get(name, 0))
            admitted.add_metric([name], limits.admitted.get(name, 0))
            if name in limits.use:
                use.add_metric([name], limits.use[name])
        yield refused
        yield admitted
        yield use
        yield GaugeMetricFamily(
            "colonnade_rate_limit_degraded",
            "1 while Redis is unreachable and each replica enforces its local share of every limit.",
            value=1 if limits.degraded else 0,
        )


class _LoadCollector(Collector):
    def __init__(self, load: LoadView) -> None:
        self._load = load

    def collect(self) -> Iterator[Metric]:
        load = self._load
        gauges = (
            (
                "colonnade_admission_in_flight",
                "Calls (POST /mcp, /v1/calls) being served: queued in front of the pipeline or inside it.",
                load.in_flight,
            ),
            (
                "colonnade_admission_predicted_wait_seconds",
                "What a new call would wait: event-loop lag + calls in flight x service time.",
                load.predicted_wait_s(),
            ),
            (
                "colonnade_admission_service_seconds",
                "Event-loop time one call request takes (moving average): its CPU, or while the loop"
                " is busy or starved, the wall time per answer.",
                load.service_s,
            ),
            (
                "colonnade_admission_cpu_per_request_seconds",
                "Event-loop CPU time per answered call request (moving average).",
                load.cpu_per_request_s,
            ),
            (
                "colonnade_admission_latency_seconds",
                "Time from a call request's arrival at the HTTP edge to its answer (moving average).",
                load.latency_s,
            ),
            (
                "colonnade_event_loop_lag_seconds",
                "How late the event loop runs a timer (moving average).",
                load.loop_lag_s,
            ),
        )
        for name, doc, value in gauges:
            yield GaugeMetricFamily(name, doc, value=value)
        if load.max_in_flight is not None:
            yield GaugeMetricFamily(
                "colonnade_admission_max_in_flight", "The bound on calls in flight.", value=load.max_in_flight
            )
        shed = CounterMetricFamily(
            "colonnade_admission_shed",
            "Calls refused at once with R-CAP-OVERLOAD, by reason (in_flight_limit, deadline).",
            labels=["reason"],
        )
        for reason in ("in_flight_limit", "deadline"):
            shed.add_metric([reason], load.shed.get(reason, 0))
        yield shed


class SandboxView(Protocol):
    """The stdio servers' sandbox violations."""

    def violations(self) -> Mapping[tuple[str, str], int]:
        """(server, kind: memory, cpu, pids, signal, setup) -> times its sandbox ended its process."""
        ...


class _SandboxCollector(Collector):
    def __init__(self, sandboxes: SandboxView) -> None:
        self._sandboxes = sandboxes

    def collect(self) -> Iterator[Metric]:
        violations = CounterMetricFamily(
            "colonnade_sandbox_violations",
            "Times a stdio server's sandbox ended its process: memory, cpu (time), pids, signal, setup.",
            labels=["server", "kind"],
        )
        for (server, kind), times in sorted(self._sandboxes.violations().items()):
            violations.add_metric([server, kind], times)
        yield violations


class _CircuitCollector(Collector):
    def __init__(self, circuits: CircuitView) -> None:
        self._circuits = circuits

    def collect(self) -> Iterator[Metric]:
        state = GaugeMetricFamily(
            "colonnade_backend_circuit_state",
            "Circuit breaker per backend host:port: 0 closed, 1 half-open (probing), 2 open (failing fast).",
            labels=["backend"],
        )
        opened = CounterMetricFamily(
            "colonnade_backend_circuit_opened", "Times a backend's circuit opened.", labels=["backend"]
        )
        for backend, (value, times) in sorted(self._circuits.states().items()):
            state.add_metric([backend], value)
            opened.add_metric([backend], times)
        yield state
        yield opened


class _SessionCollector(Collector):
    def __init__(self, sessions: SessionView) -> None:
        self._sessions = sessions

    def collect(self) -> Iterator[Metric]:
        sessions = self._sessions
        yield GaugeMetricFamily(
            "colonnade_mcp_sessions",
            "MCP sessions held (2025-11-25 and older clients).",
            value=sessions.held(),
        )
        yield GaugeMetricFamily(
            "colonnade_mcp_session_callers",
            "Callers holding at least one MCP session.",
            value=sessions.callers,
        )
        yield CounterMetricFamily(
            "colonnade_mcp_sessions_evicted",
            "Idle MCP sessions closed to make room for a new one (the caller's own or the biggest holder's).",
            value=sessions.evicted,
        )
        yield CounterMetricFamily(
            "colonnade_mcp_sessions_refused",
            "New MCP sessions refused with R-CAP-SESSIONS (no idle session could make room).",
            value=sessions.refused,
        )
