"""Figures over time for the pages: the gateway's call history, and one consumer's own calls.

`CallFigures.history` reads the rolled-up history in the store (per tool and per API, every
replica added up; it survives restarts) for what the visitor may see, as
`colonnade__metrics_time_series` does. `CallFigures.consumer` reads the audit log's call records
of the window instead: the roll-up has no consumer dimension, and a per-consumer one would put
every caller's key (a person's e-mail, when it is their subject) in the clear into a table the
audit log keeps pseudonymous. A visitor who may read the audit log (a log scope) sees every
consumer of its reach and may pick one; anyone else sees only the records of their own key.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from colonnade.catalog.catalog import Catalog
from colonnade.governance.audit import AuditLog
from colonnade.governance.audit.readers import AuditFilter, AuditReach, StoredAudit, audit_reach, read_records
from colonnade.governance.authorization import Authorizer, permits
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import GovernanceRefusal
from colonnade.governance.subscriptions import SubscriptionAdmin
from colonnade.observability.metrics_history import (
    RESOLUTIONS_S,
    HistoryPoint,
    RollupCell,
    api_of,
)
from colonnade.observability.routing_turns import RoutingTurn
from colonnade.routing.router import CallerAllowed
from colonnade.store.metrics_history_repo import MetricsHistoryStore
from colonnade.store.routing_turns_repo import RoutingTurnStore
from colonnade.store.subscriptions_repo import SubscriptionRecord

__all__ = [
    "CONSUMER_SCAN",
    "WINDOWS",
    "CallFigures",
    "ConsumerCall",
    "ConsumerUsage",
    "HistoryFigures",
    "RoutingView",
    "SubjectTotal",
    "percentile",
    "window_grid",
]

WINDOWS = {"hour": 60, "day": 300}
"""A window's name -> the width (s) of its buckets: minutes for the last hour, five minutes for a day."""

CONSUMER_SCAN = 5_000
"""Call records read for one usage view at the most (the newest of the window)."""

_OK_OUTCOMES = frozenset({"success", "success_prep", "pending"})


def window_grid(window: str, now: datetime | None = None) -> list[datetime]:
    """The starts of every bucket of the window, oldest first, the current (partial) bucket last."""
    resolution = WINDOWS[window]
    moment = now or datetime.now(UTC)
    last = int(moment.timestamp()) // resolution * resolution
    count = RESOLUTIONS_S[resolution] // resolution
    return [datetime.fromtimestamp(last - resolution * (count - 1 - n), UTC) for n in range(count)]


@dataclass(frozen=True, slots=True)
class SubjectTotal:
    """One tool's or API's calls over the window."""

    subject: str
    dimension: str
    calls: int
    errors: int
    p50_s: float | None
    p95_s: float | None


@dataclass(frozen=True, slots=True)
class HistoryFigures:
    """A window of the history: one point per bucket (empty buckets included), and the totals."""

    window: str
    resolution_s: int
    subject: str | None
    """The tool or API shown; None: every API the visitor may see, added up."""
    points: tuple[HistoryPoint, ...]
    apis: tuple[SubjectTotal, ...]
    tools: tuple[SubjectTotal, ...]

    @property
    def calls(self) -> int:
        return sum(point.calls for point in self.points)


@dataclass(frozen=True, slots=True)
class ConsumerCall:
    at: datetime
    consumer: str | None
    tool: str | None
    outcome: str | None
    code: str | None
    duration_ms: float | None
    trace_id: str | None

    @property
    def failed(self) -> bool:
        return self.outcome not in _OK_OUTCOMES


@dataclass(frozen=True, slots=True)
class ConsumerUsage:
    """The calls a usage view shows (newest first) and their figures per bucket of the window."""

    window: str
    resolution_s: int
    everyone: bool
    """The visitor may see every consumer of its reach (else only its own calls)."""
    consumer: str | None
    """Whose calls: the visitor's own key, the consumer an admin picked, or None (everyone's)."""
    calls: tuple[ConsumerCall, ...]
    times: tuple[datetime, ...]
    per_bucket: tuple[tuple[int, int, float | None, float | None], ...]
    """Per bucket of `times`: calls, errors, p50 and p95 latency (s, None without timed calls)."""
    consumers: tuple[tuple[str, int], ...] = ()
    """For an admin: every consumer seen in the window with its call count, busiest first."""
    subscriptions: tuple[SubscriptionRecord, ...] | None = None
    """The consumer's subscriptions; None when the visitor may not read them."""
    truncated: bool = False
    per_tool: tuple[SubjectTotal, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class RoutingView:
    """Routing turns as a page shows them (newest first), with their selection precision and recall."""

    everyone: bool
    turns: tuple[RoutingTurn, ...]

    @property
    def recall(self) -> float | None:
        """The share of calls whose tool the turn's listing showed."""
        calls = [(call.tool, turn.shown) for turn in self.turns for call in turn.calls]
        return sum(tool in shown for tool, shown in calls) / len(calls) if calls else None

    @property
    def precision(self) -> float | None:
        """The share of shown tools then called (each once per turn), as the Prometheus counters count."""
        used = [turn for turn in self.turns if turn.shown]
        shown = sum(len(turn.shown) for turn in used)
        return sum(turn.called_shown for turn in used) / shown if shown else None


class CallFigures:
    """The pages' reader of call figures, over the gateway's history, audit log and subscriptions."""

    def __init__(
        self,
        catalog: Catalog,
        authorizer: Authorizer,
        history: MetricsHistoryStore | None,
        audit: AuditLog | None,
        subscriptions: SubscriptionAdmin | None = None,
        turns: RoutingTurnStore | None = None,
        *,
        unauthenticated: bool = False,
    ) -> None:
        """`unauthenticated`: the gateway checks no credentials (loopback only), so whoever opens a
        page is its one local user and sees everything, as on the audit page."""
        self.catalog = catalog
        self.authorizer = authorizer
        self.history = history
        self.audit = audit
        self.subscriptions = subscriptions
        self.turns = turns
        self.unauthenticated = unauthenticated

    async def history_figures(
        self, principal: Principal, window: str, subject: str | None = None
    ) -> HistoryFigures | None:
        """The window's figures of what `principal` may see; None without a history (no database).

        `subject` names a tool (`tenant:api:operation`) or an API (`tenant:api`); one the visitor
        may not see reads as no calls, the same answer as a tool never called.
        """
        if self.history is None:
            return None
        resolution = WINDOWS[window]
        grid = window_grid(window)
        allowed = self.authorizer.visible(principal)
        visible_apis = self._visible_apis(allowed)
        apis = await self.history.series(resolution, "api", grid[0])
        tools = await self.history.series(resolution, "tool", grid[0])
        apis = {api: points for api, points in apis.items() if allowed is None or api in visible_apis}
        tools = {tool: points for tool, points in tools.items() if permits(allowed, tool)}
        if subject is None:
            chosen: Iterable[list[HistoryPoint]] = apis.values()
        else:
            chosen = [(tools if subject.count(":") == 2 else apis).get(subject, [])]
        return HistoryFigures(
            window=window,
            resolution_s=resolution,
            subject=subject,
            points=tuple(_on_grid(grid, chosen)),
            apis=_totals("api", apis),
            tools=_totals("tool", tools),
        )

    def _visible_apis(self, allowed: CallerAllowed) -> set[str]:
        return {
            api_of(tool.canonical_name)
            for tool in self.catalog.tools()
            if permits(allowed, tool.canonical_name)
        }

    async def consumer(
        self, principal: Principal, window: str, consumer: str | None = None
    ) -> ConsumerUsage | None:
        """The calls of the window the visitor may see; None without an audit log (no database).

        `consumer` (a principal key such as `user:bob`) narrows an admin's view to one consumer;
        for anyone else the view is always their own key, whatever was asked.
        """
        if self.audit is None:
            return None
        reach = self._reach(principal)
        everyone = reach is not None
        whose = (consumer or None) if everyone else principal.key
        if reach is None:
            reach = AuditReach(principal.tenant)
        grid = window_grid(window)
        where = AuditFilter(
            kind="call",
            actor=self.audit.stored_actor(whose) if whose is not None else None,
            since=grid[0],
        )
        records = await read_records(self.audit, reach, where, CONSUMER_SCAN)
        allowed = self.authorizer.visible(principal)
        calls = [
            _call(record)
            for record in reversed(records)
            if record.tool is None or permits(allowed, record.tool)
        ]
        counted = Counter(call.consumer or "—" for call in calls) if everyone and whose is None else Counter()
        return ConsumerUsage(
            window=window,
            resolution_s=WINDOWS[window],
            everyone=everyone,
            consumer=whose,
            calls=tuple(calls),
            times=tuple(grid),
            per_bucket=_per_bucket(grid, WINDOWS[window], calls),
            consumers=tuple(counted.most_common()),
            subscriptions=await self._subscriptions(principal, whose),
            truncated=len(records) >= CONSUMER_SCAN,
            per_tool=_tool_totals(calls),
        )

    async def routing_turns(self, principal: Principal, limit: int = 100) -> RoutingView | None:
        """The newest routing turns the visitor may see; None without a store.

        A visitor who may read the audit log sees its reach's turns (every tenant for an operator);
        anyone else sees the turns of their own sessions.
        """
        if self.turns is None:
            return None
        reach = self._reach(principal)
        if reach is None:
            turns = await self.turns.recent(tenant=principal.tenant, consumer=principal.key, limit=limit)
        else:
            turns = await self.turns.recent(tenant=reach.tenant, limit=limit)
        return RoutingView(everyone=reach is not None, turns=tuple(turns))

    def _reach(self, principal: Principal) -> AuditReach | None:
        """How far the visitor sees past its own calls: its audit reach (None: only its own)."""
        return AuditReach(None) if self.unauthenticated else audit_reach(principal)

    async def _subscriptions(
        self, principal: Principal, whose: str | None
    ) -> tuple[SubscriptionRecord, ...] | None:
        if self.subscriptions is None:
            return None
        try:
            records = await self.subscriptions.list(principal)
        except GovernanceRefusal:
            return None
        return tuple(r for r in records if whose is None or r.subscriber == whose)


def _on_grid(grid: Sequence[datetime], chosen: Iterable[list[HistoryPoint]]) -> list[HistoryPoint]:
    """Every bucket of the grid, the chosen series' points added up into it (empty: zero calls)."""
    cells: dict[datetime, RollupCell] = {start: RollupCell() for start in grid}
    for points in chosen:
        for point in points:
            cell = cells.get(point.start)
            if cell is not None:
                cell.add(RollupCell(point.calls, point.errors, list(point.histogram)))
    return [HistoryPoint(start, c.calls, c.errors, tuple(c.histogram)) for start, c in cells.items()]


def _totals(dimension: str, series: dict[str, list[HistoryPoint]]) -> tuple[SubjectTotal, ...]:
    totals = []
    for subject, points in series.items():
        cell = RollupCell()
        for point in points:
            cell.add(RollupCell(point.calls, point.errors, list(point.histogram)))
        merged = HistoryPoint(points[0].start, cell.calls, cell.errors, tuple(cell.histogram))
        totals.append(SubjectTotal(subject, dimension, cell.calls, cell.errors, merged.p50_s, merged.p95_s))
    return tuple(sorted(totals, key=lambda total: (-total.calls, total.subject)))


def _call(record: StoredAudit) -> ConsumerCall:
    return ConsumerCall(
        at=record.at,
        consumer=record.actor,
        tool=record.tool,
        outcome=record.outcome,
        code=record.code,
        duration_ms=_duration(record.details),
        trace_id=record.trace_id,
    )


def _duration(details: dict[str, Any]) -> float | None:
    """A call record's `duration_ms` (the audit log keeps detail values as text)."""
    try:
        return float(details["duration_ms"])
    except (KeyError, TypeError, ValueError):
        return None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile (0-1) of measured values, nearest rank (exact: these are the calls themselves)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 1))
    return ordered[int(rank) - 1]


def _per_bucket(
    grid: Sequence[datetime], resolution: int, calls: Sequence[ConsumerCall]
) -> tuple[tuple[int, int, float | None, float | None], ...]:
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    durations: dict[int, list[float]] = defaultdict(list)
    first = int(grid[0].timestamp())
    for call in calls:
        slot = (int(call.at.timestamp()) - first) // resolution
        if not 0 <= slot < len(grid):
            continue
        counts[slot][0] += 1
        counts[slot][1] += call.failed
        if call.duration_ms is not None:
            durations[slot].append(call.duration_ms / 1000)
    return tuple(
        (
            counts[slot][0] if slot in counts else 0,
            counts[slot][1] if slot in counts else 0,
            percentile(durations.get(slot, []), 0.5),
            percentile(durations.get(slot, []), 0.95),
        )
        for slot in range(len(grid))
    )


def _tool_totals(calls: Sequence[ConsumerCall]) -> tuple[SubjectTotal, ...]:
    grouped: dict[str, list[ConsumerCall]] = defaultdict(list)
    for call in calls:
        grouped[call.tool or "(no tool)"].append(call)
    totals = []
    for tool, its in grouped.items():
        timed = [c.duration_ms / 1000 for c in its if c.duration_ms is not None]
        failed = sum(c.failed for c in its)
        totals.append(
            SubjectTotal(tool, "tool", len(its), failed, percentile(timed, 0.5), percentile(timed, 0.95))
        )
    return tuple(sorted(totals, key=lambda total: (-total.calls, total.subject)))
