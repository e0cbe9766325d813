"""`/ui/metrics`: calls per tool by outcome, the most frequent error codes, latency, catalog size."""

from __future__ import annotations

from collections.abc import Sequence

from colonnade.calls.call_errors import REGISTRY
from colonnade.observability.metrics import UNRESOLVED_TOOL
from colonnade.platform.metric_values import CallStats, ErrorCount, Estimate, ToolCalls
from colonnade.surfaces.pages.html import Html, separated, tag
from colonnade.surfaces.pages.layout import METRICS_PATH, Visitor, document
from colonnade.surfaces.pages.links import tool_link
from colonnade.surfaces.pages.table_paging import filter_form, paged, pager

__all__ = ["format_estimate", "metrics_page", "metrics_problem_page"]

_LATENCY_NOTE = (
    "Latency percentiles are estimates from the histogram buckets of colonnade_call_duration_seconds "
    "(linear interpolation inside a bucket), measured from the start of the call pipeline to the result."
)


def metrics_page(
    stats: CallStats,
    visitor: Visitor | None = None,
    history: Html | None = None,
    *,
    query: str | None = None,
    page: int = 1,
    keep: dict[str, str] | None = None,
) -> Html:
    """`history`: the charts of the store's history (`history_charts`), above this process' figures.

    `query` and `page` pick the rows of the per-tool tables (the busiest first, `PAGE_ROWS` at a
    time); `keep` are the other query fields their links and the filter form carry (the window)."""
    keep = keep or {}
    search = filter_form(METRICS_PATH, query, keep, "tool-filter")
    intro = tag(
        "p",
        f"Since this gateway process started. The catalog serves {stats.catalog_tools} tools. "
        "Prometheus scrapes the same values at ",
        tag("a", "/metrics", href="/metrics"),
        ".",
        class_="muted",
    )
    if stats.total == 0 and not stats.tools:
        empty = tag(
            "p",
            "No calls yet: this gateway has not handled a tool call since it started. "
            "Call a tool (MCP tools/call, or POST /v1/calls) and reload this page.",
            class_="note",
            id="no-calls",
        )
        return document(
            "Metrics", tag("h1", "Metrics"), search, history, intro, empty, section="Metrics", visitor=visitor
        )
    tools = paged(stats.tools, lambda calls: calls.tool, query, page)
    return document(
        "Metrics",
        tag("h1", "Metrics"),
        search,
        history,
        tag("h2", "This process"),
        intro,
        _overview(stats),
        tag("h2", "Calls per tool"),
        pager(tools, METRICS_PATH, keep, "calls-pager"),
        _calls_table(stats, tools.rows),
        tag("h2", "Top error codes"),
        _errors_table(stats.errors),
        tag("p", _LATENCY_NOTE, class_="muted"),
        section="Metrics",
        visitor=visitor,
    )


def format_estimate(estimate: Estimate | None) -> str:
    """`≈ 3.2 ms`; `> 30 s` when it lies past the last finite bucket; an em dash when unknown."""
    if estimate is None:
        return "—"
    if estimate.beyond_last_bucket:
        return f"> {_duration(estimate.seconds)}"
    return f"≈ {_duration(estimate.seconds)}"


def _overview(stats: CallStats) -> Html:
    """Totals; "Tools called" counts catalog tools only, so calls naming no tool are a fact of their own."""
    unresolved = sum(tool.total for tool in stats.tools if tool.tool == UNRESOLVED_TOOL)
    called = sum(1 for tool in stats.tools if tool.total and tool.tool != UNRESOLVED_TOOL)
    return tag(
        "dl",
        tag("dt", "Calls"),
        tag("dd", stats.total, id="total-calls"),
        tag("dt", "Tools called"),
        tag("dd", called, id="tools-called"),
        tag("dt", "Calls naming no known tool") if unresolved else None,
        tag("dd", unresolved, id="unresolved-calls") if unresolved else None,
        tag("dt", "Latency p50 (estimate)"),
        tag("dd", format_estimate(stats.p50)),
        tag("dt", "Latency p95 (estimate)"),
        tag("dd", format_estimate(stats.p95)),
        tag("dt", "Catalog size"),
        tag("dd", f"{stats.catalog_tools} tools"),
        class_="facts",
    )


def _calls_table(stats: CallStats, shown: Sequence[ToolCalls]) -> Html:
    head = tag(
        "tr",
        tag("th", "Tool"),
        *(tag("th", status, class_="num") for status in stats.statuses),
        tag("th", "total", class_="num"),
        tag("th", "in flight", class_="num"),
        tag("th", "p50 (est.)", class_="num"),
        tag("th", "p95 (est.)", class_="num"),
    )
    rows = (_tool_row(tool, stats.statuses) for tool in shown)
    return tag("table", tag("thead", head), tag("tbody", *rows), id="calls")


def _tool_row(tool: ToolCalls, statuses: tuple[str, ...]) -> Html:
    cells = (
        tag("td", tool.by_status.get(status, 0), class_="num", data_status=status) for status in statuses
    )
    return tag(
        "tr",
        tag("td", tool_link(tool.tool)),
        *cells,
        tag("td", tool.total, class_="num"),
        tag("td", tool.in_flight, class_="num"),
        tag("td", format_estimate(tool.p50), class_="num"),
        tag("td", format_estimate(tool.p95), class_="num"),
        data_tool=tool.tool,
    )


def _errors_table(errors: tuple[ErrorCount, ...]) -> Html:
    if not errors:
        return tag("p", "No call has ended in an error.", class_="muted")
    head = tag(
        "tr",
        tag("th", "Code"),
        tag("th", "Status"),
        tag("th", "Calls", class_="num"),
        tag("th", "Tools"),
        tag("th", "Fix"),
    )
    rows = (
        tag(
            "tr",
            tag("td", tag("code", error.code)),
            tag("td", error.status),
            tag("td", error.calls, class_="num"),
            tag("td", separated(tool_link(t) for t in error.tools)),
            tag("td", REGISTRY[error.code].fix if error.code in REGISTRY else "", class_="muted"),
            data_code=error.code,
        )
        for error in errors
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), id="errors")


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.001:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1_000_000:.0f} µs"


def metrics_problem_page(message: str, visitor: Visitor | None = None) -> Html:
    """A query the metrics page cannot answer (an unknown window): what is wrong and how to ask."""
    return document(
        "Metrics",
        tag("h1", "Metrics"),
        tag("p", message, class_="error", id="error"),
        section="Metrics",
        visitor=visitor,
    )
