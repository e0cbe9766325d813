"""The input document a policy reads: who calls, which tool, with what arguments, and when.

Time is given in UTC and in the tool's tenant's time zone (`policy.time_zones`, UTC when none is
configured), already split into hour and weekday, so that a policy compares plain numbers and
names (English weekday names) instead of parsing dates.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = [
    "context_document",
    "delegation_document",
    "policy_input",
    "principal_document",
    "time_document",
    "tool_document",
]

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""English whatever the process's locale (`strftime("%A")` follows LC_TIME), and cheaper: the
weekday is written for every call."""


def policy_input(
    principal: Principal,
    tool: Tool,
    arguments: Mapping[str, Any],
    *,
    now: datetime | None = None,
    time_zones: Mapping[str, str] | None = None,
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`context`: the call's guardrail findings and session flow (`context_document`)."""
    zone = (time_zones or {}).get(tool.tenant)
    return {
        "principal": principal_document(principal),
        "tool": tool_document(tool),
        "arguments": dict(arguments),
        "time": time_document(now or datetime.now(UTC), zone),
        **context_document(context),
    }


def context_document(context: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the call met before the policy: `guardrails.arguments` (findings: kind, path, count, never
        a value), `flow.labels` (the labels its session touched so far) and `flow.known` (false when the
    shared state could not say); empty when nothing was met."""
    given = context or {}
    return {
        "guardrails": given.get("guardrails") or {"arguments": []},
        "flow": given.get("flow") or {"labels": [], "known": True},
    }


def principal_document(principal: Principal) -> dict[str, Any]:
    return {
        "kind": principal.kind.value,
        "id": principal.id,
        "tenant": principal.tenant,
        "persona": principal.persona,
        "team": principal.team,
        "scopes": sorted(principal.scopes),
        "agent": principal.id if principal.kind is PrincipalKind.AGENT else None,
        "actor_chain": list(principal.actor_chain),
        "delegation": delegation_document(principal),
    }


def delegation_document(principal: Principal) -> dict[str, Any]:
    """How far the call is from its origin: `depth` (0 undelegated), `origin` (the chain's first
    principal key, or the caller's own), `hops_from_person` (null when no person began the chain)."""
    chain = principal.actor_chain or (principal.key,)
    from_person = chain[0].startswith(f"{PrincipalKind.USER.value}:")
    return {
        "depth": principal.delegation_depth,
        "origin": chain[0],
        "hops_from_person": principal.delegation_depth if from_person else None,
    }


def tool_document(tool: Tool) -> dict[str, Any]:
    asks_approval = tool.requires_human_approval or (
        tool.llm is not None and tool.llm.requires_human_approval
    )
    return {
        "name": tool.canonical_name,
        "tenant": tool.tenant,
        "api": tool.api,
        "operation": tool.operation,
        "version": tool.version,
        "side_effects": tool.side_effects.value,
        "requires_human_approval": asks_approval,
        "safe_for_agents": tool.safe_for_agents,
        "environment": tool.environment,
        "owner": tool.owner,
        "tags": list(tool.tags),
        "source": tool.source,
        "flow_labels": list(tool.flow_labels),
    }


def time_document(now: datetime, zone: str | None) -> dict[str, Any]:
    utc = now.astimezone(UTC)
    local = utc.astimezone(ZoneInfo(zone)) if zone else utc
    return {
        "utc": utc.isoformat().replace("+00:00", "Z"),
        "unix": int(utc.timestamp()),
        "time_zone": zone or "UTC",
        "local": {
            "iso": local.isoformat(),
            "hour": local.hour,
            "minute": local.minute,
            "weekday": _WEEKDAYS[local.weekday()],
            "day_of_week": local.isoweekday(),
        },
    }
