"""Authorization: which tools a principal may see and call, decided in one place.

The pipeline's authorize stage asks `decide` for every call, and every listing (tools/list,
search, REST, pages) asks `visible` for the same rules as a predicate, so what a caller is
shown and what it may call come from one authorizer. A tool the caller may not see is answered
exactly like a tool that does not exist, so refusals do not reveal what other tenants serve; a
tool it may see but not call this way (a write without the scope, an API without a
subscription) is refused with the `A-AUTH-*` code that says why.

`AllowAll` is the policy of a gateway without authentication (loopback only); the persona,
scope and tenant rules (`tool_access.py`) plug in behind the same methods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from colonnade.catalog.tool import Tool
from colonnade.governance.principal import Principal
from colonnade.routing.permits import permits
from colonnade.routing.router import CallerAllowed

__all__ = ["ALLOWED", "AllowAll", "Authorizer", "Decision", "permits", "tool_filter"]


@dataclass(frozen=True, slots=True)
class Decision:
    """One authorization answer: allowed or not, whether the tool is visible at all, and why.

    `code` is the registry code of a refusal of a visible tool (an invisible one is an unknown
    tool); `reasons` say which rules decided, for the audit record.
    """

    allowed: bool
    visible: bool
    reasons: tuple[str, ...] = ()
    code: str | None = None
    approval: tuple[str, ...] = ()
    """Why an allowed call must first wait for a human's approval (a persona that writes only so)."""

    @classmethod
    def allow(cls, *reasons: str) -> Decision:
        return cls(True, True, reasons)

    @classmethod
    def allow_after_approval(cls, why: str, *reasons: str) -> Decision:
        return cls(True, True, reasons, approval=(why,))

    @classmethod
    def hidden(cls, *reasons: str) -> Decision:
        return cls(False, False, reasons)

    @classmethod
    def refuse(cls, code: str, *reasons: str) -> Decision:
        return cls(False, True, reasons, code)


ALLOWED = Decision.allow("no authorization configured")


class Authorizer(Protocol):
    def visible(self, principal: Principal) -> CallerAllowed:
        """What the principal may see (lookups, did-you-mean, the catalog page), as the router takes it
        (None: all)."""
        ...

    def listed(self, principal: Principal) -> CallerAllowed:
        """What an agent-facing listing shows the principal (`tools/list`, `GET /v1/tools`, search): the
        tools it may call now, a subset of `visible` (a consumer's subscribed APIs only)."""
        ...

    def decide(self, principal: Principal, tool: Tool) -> Decision:
        """Whether the principal may call this tool, and why."""
        ...


class AllowAll:
    """Every principal may call every tool: the policy until authentication is configured."""

    def visible(self, principal: Principal) -> CallerAllowed:
        return None

    def listed(self, principal: Principal) -> CallerAllowed:
        return None

    def decide(self, principal: Principal, tool: Tool) -> Decision:
        return ALLOWED


def tool_filter(allowed: CallerAllowed) -> Callable[[Tool], bool] | None:
    """A `visible` answer as a predicate on tools (what a filtered listing pages over); None: all."""
    if allowed is None:
        return None
    return lambda tool: permits(allowed, tool.canonical_name)
