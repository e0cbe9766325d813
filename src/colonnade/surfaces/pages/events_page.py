"""`/ui/events`: the gateway's last typed trace events, newest first, with a filter by kind.

What `GET /v1/trace-events` serves, as a table a person can scan: when, what, which call or
server, and the outcome. A row's trace id links to the events of the same trace.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from urllib.parse import urlencode

from colonnade.observability.trace_events import (
    EVENT_KINDS,
    CallEnded,
    CallStarted,
    DownstreamConnected,
    DownstreamDisconnected,
    RouterFallback,
    ToolsListed,
    TraceEvent,
)
from colonnade.surfaces.pages.html import Html, join, tag
from colonnade.surfaces.pages.layout import EVENTS_PATH, Visitor, document

__all__ = ["events_page", "events_problem_page"]

_COLUMNS = ("At (UTC)", "Kind", "What", "Outcome", "Trace")


def events_page(
    events: Sequence[TraceEvent],
    *,
    kind: str | None,
    trace_id: str | None,
    kept: int,
    visitor: Visitor | None = None,
) -> Html:
    intro = tag(
        "p",
        f"The last trace events of this gateway process ({kept} kept in memory), newest first. "
        "The same records are served at ",
        tag("a", "/v1/trace-events", href="/v1/trace-events"),
        ".",
        class_="muted",
    )
    filters = tag(
        "p",
        tag("a", "all", href=EVENTS_PATH, class_="here" if kind is None else None),
        *(
            join(" · ", tag("a", name, href=_href(kind=name), class_="here" if name == kind else None))
            for name in EVENT_KINDS
        ),
        id="kinds",
    )
    shown = (
        tag("p", f"Events of trace {trace_id}. ", tag("a", "Show every trace", href=_href(kind=kind)), ".")
        if trace_id
        else None
    )
    if not events:
        body: Html = tag("p", "No events match yet.", class_="note", id="no-events")
    else:
        header = tag("tr", *(tag("th", column, scope="col") for column in _COLUMNS))
        body = tag(
            "table", tag("thead", header), tag("tbody", *(_row(event) for event in events)), id="events"
        )
    return document(
        "Events", tag("h1", "Events"), intro, filters, shown, body, section="Events", visitor=visitor
    )


def events_problem_page(message: str, visitor: Visitor | None = None) -> Html:
    return document(
        "Events", tag("h1", "Events"), tag("p", message, class_="note"), section="Events", visitor=visitor
    )


def _row(event: TraceEvent) -> Html:
    at = dt.datetime.fromtimestamp(event.time_unix_nano / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    what, outcome = _describe(event)
    trace = tag("a", event.trace_id[:12], href=_href(trace_id=event.trace_id)) if event.trace_id else ""
    return tag(
        "tr", tag("td", at), tag("td", event.kind), tag("td", what), tag("td", outcome), tag("td", trace)
    )


def _describe(event: TraceEvent) -> tuple[str, str]:
    if isinstance(event, CallStarted):
        return event.tool_id, ""
    if isinstance(event, CallEnded):
        outcome = event.status + (f" {event.code}" if event.code else "")
        return event.tool or "(no tool)", f"{outcome} in {event.duration_ms:.1f} ms"
    if isinstance(event, ToolsListed):
        chosen = ", ".join(event.selected[:5]) + (" …" if len(event.selected) > 5 else "")
        note = "fallback" if event.fallback_used else f"confidence {event.confidence:.2f}"
        return f"“{event.query}” → {chosen or 'nothing'}", note
    if isinstance(event, RouterFallback):
        return f"“{event.query}”", event.reason or f"confidence {event.confidence:.2f}"
    if isinstance(event, DownstreamConnected):
        return event.server, f"up ({event.protocol_version or 'unknown version'})"
    if isinstance(event, DownstreamDisconnected):
        return event.server, f"down: {event.reason}"
    return "", ""


def _href(*, kind: str | None = None, trace_id: str | None = None) -> str:
    query = {key: value for key, value in (("kind", kind), ("trace_id", trace_id)) if value}
    return EVENTS_PATH + ("?" + urlencode(query) if query else "")
