"""The immutable context a call carries through the pipeline stages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from colonnade.calls.call_record import CallRecord
from colonnade.calls.caller_channel import CallerChannel
from colonnade.calls.envelope import (
    CallError,
    CallMetrics,
    CallRequest,
    CallResult,
    CallStatus,
    Provenance,
    hand_over,
)
from colonnade.calls.handover import Handover
from colonnade.calls.manifest import ToolManifest
from colonnade.catalog.tool import Tool
from colonnade.governance.obligations import NO_OBLIGATIONS, Obligations
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal

__all__ = ["DEFAULT_TIMEOUT_S", "Call", "TraceContext", "effective_timeout_ms"]

DEFAULT_TIMEOUT_S = 30.0
"""The deadline of a call before its tool is known (resolution then applies the tool's limits)."""


@dataclass(frozen=True, slots=True)
class TraceContext:
    """Where this call sits in a distributed trace: every span and log line of the call names it."""

    trace_id: str
    parent_span_id: str | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A parsed request, who makes it, and (once the resolve stage ran) its tool and manifest.

    A stage that changes the call makes a copy (`evolve`); the copies share one `record`. `tool`
    and `manifest` may be read only by stages after resolution; reading them earlier is a
    programming error and raises. `channel` is the caller's protocol channel when its surface has
    one (`calls/caller_channel.py`).
    """

    request: CallRequest
    principal: Principal = ANONYMOUS_LOOPBACK
    resolved_tool: Tool | None = None
    resolved_manifest: ToolManifest | None = None
    started: float = field(default_factory=time.perf_counter)
    deadline: float = 0.0
    obligations: Obligations = NO_OBLIGATIONS
    """What the policy decision that allowed the call asks of the stages after it."""
    channel: CallerChannel | None = None
    session_id: str | None = None
    """The caller's protocol session (MCP `Mcp-Session-Id`), when its surface has one."""
    policy_context: dict[str, Any] | None = None
    """What the call met before the policy (guardrail findings, its session's flow labels)."""
    record: CallRecord = field(default_factory=CallRecord)
    """What inner stages learn for the stages that wrap them; shared by every copy (`call_record.py`)."""

    @classmethod
    def start(
        cls,
        request: CallRequest,
        tool: Tool | None = None,
        manifest: ToolManifest | None = None,
        *,
        principal: Principal = ANONYMOUS_LOOPBACK,
        channel: CallerChannel | None = None,
        session_id: str | None = None,
    ) -> Call:
        """A call entering the pipeline; given a tool and manifest, it is resolved already."""
        now = time.perf_counter()
        deadline = now + _unresolved_timeout_ms(request) / 1000
        call = cls(request, principal, None, None, now, deadline, NO_OBLIGATIONS, channel, session_id)
        return call.resolve(tool, manifest) if tool is not None and manifest is not None else call

    def resolve(self, tool: Tool, manifest: ToolManifest) -> Call:
        """The call with its tool known: the deadline now honours the tool's limits."""
        deadline = self.started + effective_timeout_ms(self.request, manifest) / 1000
        return replace(self, resolved_tool=tool, resolved_manifest=manifest, deadline=deadline)

    def evolve(self, **changes: Any) -> Call:
        return replace(self, **changes)

    @property
    def tool(self) -> Tool:
        if self.resolved_tool is None:
            raise RuntimeError("the call's tool is read before the resolve stage ran")
        return self.resolved_tool

    @property
    def manifest(self) -> ToolManifest:
        if self.resolved_manifest is None:
            raise RuntimeError("the call's manifest is read before the resolve stage ran")
        return self.resolved_manifest

    @property
    def trace(self) -> TraceContext:
        context = self.request.context
        return TraceContext(context.trace_id, context.parent_span_id)

    @property
    def remaining_s(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    def result(
        self,
        status: CallStatus,
        *,
        output: Any = None,
        error: CallError | None = None,
        warnings: list[str] | None = None,
        commit_token: str | None = None,
        cpu_ms: float | None = None,
    ) -> CallResult:
        """Close the call with an outcome; metrics are always filled, provenance (and the handover's
        tool) once resolved.

        `cpu_ms` is the tool's CPU time when its adapter measured it (in-process organs).
        """
        tool = self.resolved_tool
        result = CallResult(
            call_id=self.request.call_id,
            status=status,
            output=output,
            error=error,
            commit_token=commit_token,
            side_effects=self._effects(status),
            metrics=CallMetrics(
                duration_ms=round((time.perf_counter() - self.started) * 1000, 3),
                cpu_ms=round(cpu_ms, 3) if cpu_ms is not None else None,
            ),
            provenance=None if tool is None else _provenance(tool.canonical_name, tool.version, tool.digest),
            warnings=warnings or [],
        )
        if tool is not None:
            hand_over(result, Handover(tool=tool))
        return result

    def _effects(self, status: CallStatus) -> list[str]:
        """What the call did to the world: its declared write/destructive effect, once it ran."""
        if self.resolved_tool is None:
            return []
        kind = self.resolved_tool.side_effects.value
        ran = status in (CallStatus.SUCCESS, CallStatus.SUCCESS_PREP) and not self.request.dry_run
        return [kind] if ran and kind in ("write", "destructive") else []


@lru_cache(maxsize=4096)
def _provenance(tool_id: str, tool_version: str, digest: str) -> Provenance:
    """Built once per tool version, not per call (the model is frozen, so results can share it)."""
    return Provenance(tool_id=tool_id, tool_version=tool_version, digest=digest)


def effective_timeout_ms(request: CallRequest, manifest: ToolManifest) -> float:
    """min(the call's timeout or the tool's default, time left until the deadline, the tool's maximum)."""
    limits = manifest.limits
    constraints = request.constraints
    candidates: list[float] = [constraints.timeout_ms or limits.timeout_ms_default, limits.timeout_ms_max]
    if constraints.deadline_unix_ms is not None:
        candidates.append(max(0.0, constraints.deadline_unix_ms - time.time() * 1000))
    return min(candidates)


def _unresolved_timeout_ms(request: CallRequest) -> float:
    constraints = request.constraints
    candidates: list[float] = [constraints.timeout_ms or DEFAULT_TIMEOUT_S * 1000]
    if constraints.deadline_unix_ms is not None:
        candidates.append(max(0.0, constraints.deadline_unix_ms - time.time() * 1000))
    return min(candidates)
