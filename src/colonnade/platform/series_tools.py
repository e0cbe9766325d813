"""`colonnade__metrics_time_series`: one tool's or one API's calls, errors and latency over time.

It reads the rolled-up history the gateway keeps in its store (`observability/metrics_history.py`:
minute buckets for the last hour, five-minute buckets for the last day, every replica's rows added
up), so it survives restarts and covers every replica. The history is written every
`telemetry.history_flush_s`, so the newest bucket may lag by that much. A caller sees the series of
a tool it may see, or of an API one of whose tools it may see; anything else is answered as unknown.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from colonnade.governance.authorization import permits
from colonnade.governance.personas import Scope
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import UnknownResource
from colonnade.observability.metrics_history import RESOLUTIONS_S, api_of
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.personas import READERS_OF_FIGURES
from colonnade.platform.schemas import ANY_OBJECT, array, integer, obj, output, string
from colonnade.platform.services import PlatformServices, need

__all__ = ["SERIES_TOOLS"]

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
)
