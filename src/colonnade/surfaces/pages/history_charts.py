"""The metrics page's charts: calls/s, p50/p95 latency and error rate over the last hour or day.

They show the rolled-up history from the store (`platform/usage.py`), so they cover every
replica and survive a restart; the history is written every `telemetry.history_flush_s`, so the
newest bucket may lag by that much. Below the charts, every API and the busiest tools with calls
in the window (a page at a time, filtered by name: `table_paging.py`), each a link that charts it
alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from colonnade.platform.usage import WINDOWS, HistoryFigures, SubjectTotal
from colonnade.surfaces.pages.html import Child, Html, join, tag
from colonnade.surfaces.pages.layout import METRICS_PATH
from colonnade.surfaces.pages.svg_chart import ChartSeries, line_chart
from colonnade.surfaces.pages.table_paging import paged, pager

__all__ = ["format_ms", "format_percent", "format_rate", "history_charts", "window_switch"]

_WINDOW_LABELS = {"hour": "Last hour (per minute)", "day": "Last day (per five minutes)"}


def history_charts(figures: HistoryFigures | None, query: str | None = None, page: int = 1) -> Html:
    """`query` and `page` pick the rows of the tools table (a part of the name, 1-based page)."""
    if figures is None:
        return tag(
            "p",
            "No history: this gateway runs without a database, so it keeps no metrics over time.",
            class_="note",
            id="no-history",
        )
    what = figures.subject or "every API you may see"
    times = [point.start for point in figures.points]
    per_second = [point.calls / figures.resolution_s for point in figures.points]
    p50 = [_ms(point.p50_s) for point in figures.points]
    p95 = [_ms(point.p95_s) for point in figures.points]
    errors = [point.error_rate * 100 if point.calls else None for point in figures.points]
    tools = paged(figures.tools, lambda total: total.subject, query, page)
    keep = {"window": figures.window, **({"subject": figures.subject} if figures.subject else {})}
    return tag(
        "section",
        tag("h2", f"History: {what}"),
        window_switch(figures.window, {"subject": figures.subject} if figures.subject else {}),
        tag(
            "p",
            f"{figures.calls} calls in the window, from the history kept in the store (every replica; it "
            "survives restarts). The newest bucket may lag by the history's flush interval.",
            class_="muted",
            id="history-calls",
        ),
        tag("a", "All APIs", href=_url(figures.window)) if figures.subject else None,
        tag(
            "div",
            line_chart(
                "Calls per second",
                times,
                [ChartSeries("calls/s", per_second)],
                y_label="calls/s",
                format_value=format_rate,
                chart_id="chart-calls",
            ),
            line_chart(
                "Latency",
                times,
                [ChartSeries("p50", p50), ChartSeries("p95", p95)],
                y_label="ms",
                format_value=format_ms,
                chart_id="chart-latency",
            ),
            line_chart(
                "Error rate",
                times,
                [ChartSeries("errors", errors)],
                y_label="% of calls",
                format_value=format_percent,
                chart_id="chart-errors",
            ),
            class_="charts",
        ),
        tag("h3", "APIs in the window"),
        _totals(figures.apis, figures.window, "history-apis"),
        tag("h3", "Tools in the window"),
        pager(tools, METRICS_PATH, keep, "history-tools-pager"),
        _totals(tools.rows, figures.window, "history-tools"),
        id="history",
        data_window=figures.window,
    )


def window_switch(window: str, keep: dict[str, str], path: str = METRICS_PATH) -> Html:
    """Links to the hour and day views (the current one marked), keeping the other query fields."""
    links: list[Child] = []
    for name in WINDOWS:
        label = _WINDOW_LABELS[name]
        if name == window:
            links.append(tag("strong", label, id=f"window-{name}", aria_current="true"))
        else:
            links.append(tag("a", label, href=_url(name, path=path, **keep), id=f"window-{name}"))
        links.append(" ")
    return tag("p", join(*links), class_="window")


def format_rate(value: float) -> str:
    if value == 0:
        return "0"
    return f"{value:.3g}"


def format_ms(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    return f"{value:.3g} ms"


def format_percent(value: float) -> str:
    return f"{value:.3g}%"


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _url(window: str, path: str = METRICS_PATH, **fields: str) -> str:
    return f"{path}?{urlencode({'window': window, **fields})}"


def _totals(totals: Sequence[SubjectTotal], window: str, table_id: str) -> Html:
    if not totals:
        return tag("p", "No calls in this window.", class_="muted", id=f"{table_id}-none")
    head = tag(
        "tr",
        tag("th", "Name"),
        tag("th", "calls", class_="num"),
        tag("th", "errors", class_="num"),
        tag("th", "p50 (est.)", class_="num"),
        tag("th", "p95 (est.)", class_="num"),
    )
    rows = (
        tag(
            "tr",
            tag("td", tag("a", total.subject, href=_url(window, subject=total.subject))),
            tag("td", total.calls, class_="num"),
            tag("td", total.errors, class_="num"),
            tag("td", _latency(total.p50_s), class_="num"),
            tag("td", _latency(total.p95_s), class_="num"),
            data_subject=total.subject,
        )
        for total in totals
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), id=table_id)


def _latency(seconds: float | None) -> str:
    return "—" if seconds is None else format_ms(seconds * 1000)
