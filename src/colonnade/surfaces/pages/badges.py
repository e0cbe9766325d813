"""The badges a reader scans a tool list by: what a call changes, and who must agree to it."""

from __future__ import annotations

from colonnade.catalog.tool import Tool
from colonnade.surfaces.pages.html import Html, join, tag

__all__ = ["approval_badge", "governance_badges", "side_effects_badge"]

_SIDE_EFFECTS_HINT = {
    "none": "computes an answer; touches no data",
    "read": "reads data; changes nothing",
    "write": "creates or changes data",
    "destructive": "deletes or irreversibly changes data",
}


def side_effects_badge(tool: Tool) -> Html:
    value = tool.side_effects.value
    return tag("span", value, class_=f"badge se-{value}", title=_SIDE_EFFECTS_HINT.get(value))


def approval_badge(tool: Tool) -> Html:
    if tool.requires_human_approval:
        return tag(
            "span", "approval required", class_="badge approval-required", title="a human approves each call"
        )
    return tag("span", "no approval", class_="badge approval-none", title="no human approval per call")


def governance_badges(tool: Tool) -> Html:
    """Approval, plus a warning when the contract says autonomous agents should not call the tool."""
    unsafe = None
    if not tool.safe_for_agents:
        unsafe = tag("span", "not for agents", class_="badge agents-no", title="safe_for_agents: false")
    return join(approval_badge(tool), " ", unsafe)
