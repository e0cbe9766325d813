"""Limit rules: which calls a limit applies to, and under which count each call falls.

A rule from `colonnade.yaml` (`limits.rules`) or a tool's manifest (`limits.rate`,
`limits.concurrency_max`) applies to a call when the tool, the caller and the caller's tenant match
its globs; `per` then says what gets its own count (each agent, each tenant and tool, ...). A call
is bound to one count per rule that applies: a `BoundLimit`, which the limiter checks.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from colonnade.config import LimitRuleSettings, LimitScope
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = ["BoundLimit", "LimitKind", "LimitRule", "compile_rules"]

LimitKind = Literal["requests", "concurrency"]
"""Calls per window, or calls at once."""


@dataclass(frozen=True, slots=True)
class BoundLimit:
    """One count a call falls under: `key` names the count (rule name and its `per` values)."""

    name: str
    kind: LimitKind
    limit: int
    window_ms: int
    key: str


@dataclass(frozen=True, slots=True)
class LimitRule:
    name: str
    per: tuple[LimitScope, ...]
    requests: int | None
    window_ms: int
    concurrency: int | None
    tools: re.Pattern[str]
    principals: re.Pattern[str]
    tenants: re.Pattern[str]

    @classmethod
    def from_settings(cls, settings: LimitRuleSettings) -> LimitRule:
        return cls(
            name=settings.name,
            per=tuple(settings.per),
            requests=settings.requests,
            window_ms=max(1, round(settings.window_s * 1000)),
            concurrency=settings.concurrency,
            tools=_globs(settings.tools),
            principals=_globs(settings.principals),
            tenants=_globs(settings.tenants),
        )

    @classmethod
    def for_tool(
        cls, name: str, tool: str, *, requests: int, window_s: float, per: Sequence[LimitScope]
    ) -> LimitRule:
        """A tool's own rate (its manifest's `limits.rate`): every caller of that one tool."""
        return cls(
            name=name,
            per=tuple(per),
            requests=requests,
            window_ms=max(1, round(window_s * 1000)),
            concurrency=None,
            tools=re.compile(re.escape(tool)),
            principals=_ANY,
            tenants=_ANY,
        )

    def bind(self, principal: Principal, tool: str) -> list[BoundLimit]:
        """The counts this call falls under (none when the rule does not apply to it)."""
        tenant = caller_tenant(principal, tool)
        if not (
            self.tools.fullmatch(tool)
            and self.principals.fullmatch(principal.key)
            and self.tenants.fullmatch(tenant)
        ):
            return []
        parts = [self.name]
        for scope in self.per:
            value = _scope_value(scope, principal, tool, tenant)
            if value is None:  # `per: agent` counts agents only
                return []
            parts.append(value)
        key = "|".join(parts)
        bound = []
        if self.requests is not None:
            bound.append(BoundLimit(self.name, "requests", self.requests, self.window_ms, f"w|{key}"))
        if self.concurrency is not None:
            bound.append(BoundLimit(self.name, "concurrency", self.concurrency, 0, f"c|{key}"))
        return bound


def compile_rules(rules: Sequence[LimitRuleSettings]) -> tuple[LimitRule, ...]:
    return tuple(LimitRule.from_settings(rule) for rule in rules)


def caller_tenant(principal: Principal, tool: str) -> str:
    """The caller's tenant; a caller bound to none (an operator) counts under the tool's tenant."""
    return principal.tenant if principal.tenant is not None else tool.split(":", 1)[0]


def _scope_value(scope: LimitScope, principal: Principal, tool: str, tenant: str) -> str | None:
    if scope == "principal":
        return principal.key
    if scope == "agent":
        return principal.id if principal.kind is PrincipalKind.AGENT else None
    if scope == "tenant":
        return tenant
    if scope == "tool":
        return tool
    return tool.rsplit(":", 1)[0]  # api: tenant:api


_ANY = re.compile(".*", re.DOTALL)


def _globs(patterns: Sequence[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")
