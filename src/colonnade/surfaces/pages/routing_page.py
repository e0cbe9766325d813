"""`/ui/routing`: recent routing turns: what a session asked, the tools shown, the tools then called.

From the turns the gateway keeps in its store (`observability/routing_turns.py`). A called tool
the listing did not show is marked: that is where the router missed (recall); shown tools never
called are where it showed too much (precision).
"""

from __future__ import annotations

from colonnade.observability.routing_turns import RoutingTurn
from colonnade.platform.usage import RoutingView
from colonnade.surfaces.pages.html import Child, Html, separated, tag
from colonnade.surfaces.pages.layout import Visitor, document
from colonnade.surfaces.pages.links import tool_link

__all__ = ["routing_page", "routing_problem_page"]


def routing_page(view: RoutingView, visitor: Visitor | None = None) -> Html:
    reach = (
        "Every routed session of your reach."
        if view.everyone
        else "Your own routed sessions (reading everyone's needs a log scope)."
    )
    return document(
        "Routing",
        tag("h1", "Routing"),
        tag(
            "p",
            "What routed sessions asked (MCP tools/list with _meta colonnade/routing), which tools the "
            f"listing showed and which they then called, newest first. {reach}",
            class_="muted",
        ),
        _facts(view),
        _turns(view),
        section="Routing",
        visitor=visitor,
    )


def routing_problem_page(message: str, visitor: Visitor | None = None) -> Html:
    return document(
        "Routing",
        tag("h1", "Routing"),
        tag("p", message, class_="error", id="error"),
        section="Routing",
        visitor=visitor,
    )


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def _facts(view: RoutingView) -> Html:
    return tag(
        "dl",
        tag("dt", "Turns shown"),
        tag("dd", len(view.turns), id="routing-turns-count"),
        tag("dt", "Recall (calls of a shown tool)"),
        tag("dd", _share(view.recall), id="routing-recall"),
        tag("dt", "Precision (shown tools then called)"),
        tag("dd", _share(view.precision), id="routing-precision"),
        class_="facts",
    )


def _turns(view: RoutingView) -> Html:
    if not view.turns:
        return tag(
            "p",
            "No routed listing yet: a client opts in by sending _meta colonnade/routing on tools/list.",
            class_="muted",
            id="routing-none",
        )
    head = tag(
        "tr",
        tag("th", "At (UTC)"),
        tag("th", "Consumer") if view.everyone else None,
        tag("th", "Asked"),
        tag("th", "Shown"),
        tag("th", "Called"),
        tag("th", "Confidence", class_="num"),
    )
    rows = (_row(turn, view.everyone) for turn in view.turns)
    return tag("table", tag("thead", head), tag("tbody", *rows), id="routing-turns")


def _row(turn: RoutingTurn, everyone: bool) -> Html:
    called: list[Child] = [
        tag(
            "span",
            tool_link(call.tool),
            f" ({call.outcome})",
            tag("strong", " not shown", class_="broken") if call.tool not in turn.shown else None,
            class_="called",
            data_shown="yes" if call.tool in turn.shown else "no",
        )
        for call in turn.calls
    ]
    return tag(
        "tr",
        tag("td", turn.at.strftime("%Y-%m-%d %H:%M:%S"), class_="at"),
        tag("td", turn.consumer or "—") if everyone else None,
        tag("td", turn.query, class_="why"),
        tag("td", separated(tool_link(name) for name in turn.shown) if turn.shown else "—"),
        tag("td", separated(called) if called else "—"),
        tag("td", f"{turn.confidence:.2f}", " (fallback)" if turn.fallback else None, class_="num"),
        data_turn=turn.id,
    )
