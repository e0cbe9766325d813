"""The badges a reader scans a tool list by: what a call changes, and who must agree to it."""

from __future__ import annotations

from colonnade.catalog.tool import Tool
from colonnade.contracts.llm_ready import CRITERIA
from colonnade.surfaces.pages.html import Html, join, tag

__all__ = ["approval_badge", "governance_badges", "llm_ready_badge", "side_effects_badge"]

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
    return join(approval_badge(tool), " ", unsafe, " " if unsafe is not None else None, llm_ready_badge(tool))


_CRITERION_NAMES = {c.code: c.name for c in CRITERIA}


def llm_ready_badge(tool: Tool) -> Html | None:
    """Whether a contract's tool meets the seven LLM-ready criteria; the failing ones by name."""
    failing = tool.llm_ready_failing
    if failing is None:
        return None
    if not failing:
        return tag("span", "LLM-ready", class_="badge llm-ready", title="meets the LLM-ready criteria R1-R7")
    missing = ", ".join(f"{code} {_CRITERION_NAMES.get(code, '')}".strip() for code in failing)
    return tag(
        "span",
        f"not LLM-ready: {', '.join(failing)}",
        class_="badge llm-not-ready",
        title=f"misses {missing} (colonnade contract validate --llm-ready)",
        data_llm_failing=" ".join(failing),
    )
