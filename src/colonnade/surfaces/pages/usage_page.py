"""`/ui/usage`: a consumer's own calls, errors and latency over the last hour or day, and its
subscriptions; an admin (a visitor who may read the audit log) sees every consumer and may pick one.

The figures come from the audit log's call records (`platform/usage.py` says why), so they are
exact (each call's own duration) and survive restarts.
"""

from __future__ import annotations

from collections.abc import Sequence

from colonnade.platform.usage import ConsumerCall, ConsumerUsage, SubjectTotal, percentile
from colonnade.surfaces.pages.history_charts import format_ms, window_switch
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import USAGE_PATH, Visitor, document
from colonnade.surfaces.pages.links import tool_link
from colonnade.surfaces.pages.svg_chart import ChartSeries, line_chart

__all__ = ["RECENT_SHOWN", "usage_page", "usage_problem_page"]

RECENT_SHOWN = 50
"""The newest calls listed under the charts."""


def usage_page(usage: ConsumerUsage, visitor: Visitor | None = None) -> Html:
    whose = usage.consumer or "every consumer"
    reach = (
        "You may read the audit log, so you see every consumer of your reach; pick one below."
        if usage.everyone
        else "Your own calls only."
    )
    keep = {"consumer": usage.consumer} if usage.everyone and usage.consumer else {}
    return document(
        "Usage",
        tag("h1", "Usage"),
        tag("p", f"Calls of {whose}, from the audit log. {reach}", class_="muted", id="usage-whose"),
        _consumer_filter(usage) if usage.everyone else None,
        window_switch(usage.window, keep, path=USAGE_PATH),
        _facts(usage),
        _charts(usage),
        tag("h2", "Per tool"),
        _per_tool(usage.per_tool),
        tag("h2", "Newest calls"),
        _recent(usage.calls[:RECENT_SHOWN], usage.everyone),
        tag("h2", "Subscriptions"),
        _subscriptions(usage),
        section="Usage",
        visitor=visitor,
    )


def usage_problem_page(message: str, visitor: Visitor | None = None) -> Html:
    return document(
        "Usage",
        tag("h1", "Usage"),
        tag("p", message, class_="error", id="error"),
        section="Usage",
        visitor=visitor,
    )


def _facts(usage: ConsumerUsage) -> Html:
    failed = sum(call.failed for call in usage.calls)
    timed = [call.duration_ms for call in usage.calls if call.duration_ms is not None]
    p50, p95 = percentile(timed, 0.5), percentile(timed, 0.95)
    return tag(
        "dl",
        tag("dt", "Calls"),
        tag("dd", len(usage.calls), id="usage-calls"),
        tag("dt", "Errors"),
        tag("dd", failed, id="usage-errors"),
        tag("dt", "Latency p50"),
        tag("dd", "—" if p50 is None else format_ms(p50)),
        tag("dt", "Latency p95"),
        tag("dd", "—" if p95 is None else format_ms(p95)),
        tag("dt", "Note") if usage.truncated else None,
        tag("dd", "Only the newest calls of the window were read.") if usage.truncated else None,
        class_="facts",
    )


def _charts(usage: ConsumerUsage) -> Html:
    times = list(usage.times)
    calls = [float(calls) for calls, _, _, _ in usage.per_bucket]
    errors = [float(errors) for _, errors, _, _ in usage.per_bucket]
    p50 = [None if p is None else p * 1000 for _, _, p, _ in usage.per_bucket]
    p95 = [None if p is None else p * 1000 for _, _, _, p in usage.per_bucket]
    per = "minute" if usage.resolution_s == 60 else "five minutes"
    return tag(
        "div",
        line_chart(
            f"Calls and errors per {per}",
            times,
            [ChartSeries("calls", calls), ChartSeries("errors", errors)],
            y_label="calls",
            format_value=lambda v: f"{v:.3g}",
            chart_id="usage-chart-calls",
        ),
        line_chart(
            "Latency",
            times,
            [ChartSeries("p50", p50), ChartSeries("p95", p95)],
            y_label="ms",
            format_value=format_ms,
            chart_id="usage-chart-latency",
        ),
        class_="charts",
    )


def _consumer_filter(usage: ConsumerUsage) -> Html:
    options = [tag("option", f"{name} ({count})", value=name) for name, count in usage.consumers]
    return tag(
        "form",
        tag(
            "label",
            "Consumer",
            tag(
                "input",
                name="consumer",
                value=usage.consumer or "",
                placeholder="user:alice (empty: everyone)",
                list="consumers",
            ),
        ),
        tag("input", type="hidden", name="window", value=usage.window),
        tag("datalist", *options, id="consumers"),
        tag("button", "Show", type="submit"),
        tag("a", "Everyone", href=f"{USAGE_PATH}?window={usage.window}") if usage.consumer else None,
        method="get",
        action=USAGE_PATH,
        class_="filters",
        role="search",
        id="consumer-filter",
    )


def _per_tool(totals: Sequence[SubjectTotal]) -> Html:
    if not totals:
        return tag("p", "No calls in this window.", class_="muted", id="usage-tools-none")
    head = tag(
        "tr",
        tag("th", "Tool"),
        tag("th", "calls", class_="num"),
        tag("th", "errors", class_="num"),
        tag("th", "p50", class_="num"),
        tag("th", "p95", class_="num"),
    )
    rows = (
        tag(
            "tr",
            tag("td", tool_link(total.subject) if total.subject.count(":") == 2 else total.subject),
            tag("td", total.calls, class_="num"),
            tag("td", total.errors, class_="num"),
            tag("td", "—" if total.p50_s is None else format_ms(total.p50_s * 1000), class_="num"),
            tag("td", "—" if total.p95_s is None else format_ms(total.p95_s * 1000), class_="num"),
            data_tool=total.subject,
        )
        for total in totals
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), id="usage-tools")


def _recent(calls: Sequence[ConsumerCall], everyone: bool) -> Html:
    if not calls:
        return tag("p", "No calls in this window.", class_="muted", id="usage-recent-none")
    head = tag(
        "tr",
        tag("th", "At (UTC)"),
        tag("th", "Consumer") if everyone else None,
        tag("th", "Tool"),
        tag("th", "Outcome"),
        tag("th", "Code"),
        tag("th", "Duration", class_="num"),
        tag("th", "Trace"),
    )
    rows = (
        tag(
            "tr",
            tag("td", call.at.strftime("%Y-%m-%d %H:%M:%S"), class_="at"),
            tag("td", call.consumer or "—") if everyone else None,
            tag("td", tool_link(call.tool) if call.tool else "—"),
            tag("td", call.outcome or "—"),
            tag("td", tag("code", call.code) if call.code else "—"),
            tag("td", "—" if call.duration_ms is None else format_ms(call.duration_ms), class_="num"),
            tag("td", tag("code", call.trace_id[:16]) if call.trace_id else "—"),
            data_consumer=call.consumer or "",
            data_outcome=call.outcome or "",
        )
        for call in calls
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), id="usage-recent")


def _subscriptions(usage: ConsumerUsage) -> Html:
    if usage.subscriptions is None:
        return tag(
            "p",
            "Not shown: your credential may not read subscriptions (colonnade:subscriptions:read), "
            "or this gateway keeps none.",
            class_="muted",
            id="usage-subscriptions-none",
        )
    if not usage.subscriptions:
        return tag("p", "No subscriptions.", class_="muted", id="usage-subscriptions-none")
    head = tag("tr", tag("th", "API"), tag("th", "Subscriber"), tag("th", "State"), tag("th", "Since (UTC)"))
    rows = (
        tag(
            "tr",
            tag("td", f"{record.tenant}:{record.api}"),
            tag("td", record.subscriber),
            tag("td", record.state),
            tag("td", record.created_at.strftime("%Y-%m-%d %H:%M")),
            data_subscription=record.id,
        )
        for record in usage.subscriptions
    )
    return tag("table", tag("thead", head), tag("tbody", *rows), id="usage-subscriptions")
