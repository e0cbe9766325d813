"""`colonnade__metrics_time_series` and `colonnade__slow_requests`: latency over time, and its worst calls.

It reads the rolled-up history the gateway keeps in its store (`observability/metrics_history.py`:
minute buckets for the last hour, five-minute buckets for the last day, every replica's rows added
up), so it survives restarts and covers every replica. The history is written every
`telemetry.history_flush_s`, so the newest bucket may lag by that much. A caller sees the series of
a tool it may see, or of an API one of whose tools it may see; anything else is answered as unknown.
The slowest calls come from the audit log, whose call records carry their `duration_ms`: the
caller's tenant's calls of tools it may see, slowest first.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from colonnade.governance.audit.readers import AuditFilter, read_records
from colonnade.governance.authorization import permits
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import UnknownResource
from colonnade.observability.metrics_history import RESOLUTIONS_S, api_of
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.error_records import LOG_SCOPES, log_reach
from colonnade.platform.personas import READERS_OF_FIGURES
from colonnade.platform.schemas import ANY_OBJECT, array, integer, obj, output, string
from colonnade.platform.services import PlatformServices, need

__all__ = ["SERIES_TOOLS"]

_SLOW_SCANNED = 5000
"""Call records read per request at the most (the newest of the window)."""

_WINDOWS = {"hour": 60, "day": 300}
"""The window asked -> the bucket width that covers it."""


async def metrics_time_series(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    history = need(services.history, "a metrics history")
    subject = str(args["subject"]).strip()
    window = str(args.get("window", "hour"))
    resolution = _WINDOWS[window]
    dimension = "tool" if subject.count(":") == 2 else "api"
    allowed = services.authorizer.visible(principal)
    if dimension == "tool":
        seen = permits(allowed, subject)
    else:
        seen = any(
            api_of(t.canonical_name) == subject and permits(allowed, t.canonical_name)
            for t in services.catalog.tools()
        )
    if not seen:
        raise UnknownResource(
            f"no tool or API {subject!r} you may see (a tool is tenant:api:operation, an API tenant:api)"
        )
    since = datetime.now(UTC) - timedelta(seconds=RESOLUTIONS_S[resolution])
    series = await history.series(resolution, dimension, since, {subject})
    points = [
        {
            "start": point.start.isoformat(),
            "calls": point.calls,
            "errors": point.errors,
            "error_rate": round(point.error_rate, 4),
            "p50_s": point.p50_s,
            "p95_s": point.p95_s,
        }
        for point in series.get(subject, [])
    ]
    return {
        "subject": subject,
        "dimension": dimension,
        "window": window,
        "resolution_s": resolution,
        "points": points,
    }


async def slow_requests(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    audit = need(services.audit, "an audit log")
    since = datetime.now(UTC) - timedelta(minutes=int(args.get("window_minutes", 60)))
    where = AuditFilter(kind="call", tool=args.get("tool"), since=since)
    records = await read_records(audit, log_reach(principal), where, _SLOW_SCANNED)
    allowed = services.authorizer.visible(principal)
    least = float(args.get("min_ms", 0))
    timed = [
        (duration, record)
        for record in records
        if (duration := _duration(record.details)) is not None
        and (record.tool is None or permits(allowed, record.tool))
    ]
    slowest = sorted((pair for pair in timed if pair[0] >= least), key=lambda pair: pair[0], reverse=True)
    return {
        "scanned": len(timed),
        "calls": [
            {
                "call_id": record.call_id,
                "tool": record.tool,
                "at": record.at.isoformat(),
                "duration_ms": duration,
                "outcome": record.outcome,
                "code": record.code,
                "trace_id": record.trace_id,
            }
            for duration, record in slowest[: int(args.get("limit", 20))]
        ],
    }


def _duration(details: dict[str, Any]) -> float | None:
    """A call record's `duration_ms` (the audit log keeps detail values as text)."""
    try:
        return float(details["duration_ms"])
    except (KeyError, TypeError, ValueError):
        return None


SERIES_TOOLS = (
    CoreTool(
        name="metrics_time_series",
        adr_name="metrics time series",
        group="Observability and metrics",
        title="Metrics time series",
        description=(
            "One tool's or one API's calls, errors, error rate and p50/p95 latency per minute over the last "
            "hour, or per five minutes over the last day, from the history kept in the store (every replica)."
        ),
        input_schema=obj(
            ("subject",),
            subject=string("a tool (tenant:api:operation) or an API (tenant:api)", minLength=3),
            window=string(
                "hour (minute buckets) or day (five-minute buckets)", enum=list(_WINDOWS), default="hour"
            ),
        ),
        output_schema=output(
            ("subject", "dimension", "window", "resolution_s", "points"),
            subject=string(),
            dimension=string(enum=["tool", "api"]),
            window=string(),
            resolution_s=integer(),
            points=array(ANY_OBJECT),
        ),
        scopes=(Scope.METRICS_READ,),
        personas=READERS_OF_FIGURES,
        run=metrics_time_series,
    ),
    CoreTool(
        name="slow_requests",
        adr_name="slow requests",
        group="Observability and metrics",
        title="Slowest calls",
        description=(
            "The slowest calls of tools you may see in your tenant over a window, slowest first, with their "
            "outcome, code and trace id, from the audit log (each call record keeps its duration)."
        ),
        input_schema=obj(
            window_minutes=integer("how many minutes back", minimum=1, maximum=10_080, default=60),
            tool=string("only this tool (canonical name)"),
            min_ms=integer("only calls at least this slow (ms)", minimum=0, default=0),
            limit=integer("how many", minimum=1, maximum=200, default=20),
        ),
        output_schema=output(("scanned", "calls"), scanned=integer(), calls=array(ANY_OBJECT)),
        scopes=LOG_SCOPES,
        personas=READERS_OF_FIGURES,
        run=slow_requests,
    ),
)
