"""The immutable context a call carries through the pipeline stages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from colonnade.calls.envelope import CallError, CallMetrics, CallRequest, CallResult, CallStatus, Provenance
from colonnade.calls.manifest import ToolManifest
from colonnade.catalog.tool import Tool

__all__ = ["Call", "effective_timeout_ms"]


@dataclass(frozen=True, slots=True)
class Call:
    """A parsed request with its resolved tool; a stage that changes it makes a copy (`evolve`)."""

    request: CallRequest
    tool: Tool
    manifest: ToolManifest
    started: float = field(default_factory=time.perf_counter)
    deadline: float = 0.0

    @classmethod
    def start(cls, request: CallRequest, tool: Tool, manifest: ToolManifest) -> Call:
        now = time.perf_counter()
        return cls(request, tool, manifest, now, now + effective_timeout_ms(request, manifest) / 1000)

    def evolve(self, **changes: Any) -> Call:
        return replace(self, **changes)

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
    ) -> CallResult:
        """Close the call with an outcome; metrics and provenance are always filled."""
        return CallResult(
            call_id=self.request.call_id,
            status=status,
            output=output,
            error=error,
            commit_token=commit_token,
            side_effects=self._effects(status),
            metrics=CallMetrics(duration_ms=round((time.perf_counter() - self.started) * 1000, 3)),
            provenance=Provenance(
                tool_id=self.tool.canonical_name, tool_version=self.tool.version, digest=self.tool.digest
            ),
            warnings=warnings or [],
        )

    def _effects(self, status: CallStatus) -> list[str]:
        """What the call did to the world: its declared write/destructive effect, once it ran."""
        kind = self.tool.side_effects.value
        ran = status in (CallStatus.SUCCESS, CallStatus.SUCCESS_PREP) and not self.request.dry_run
        return [kind] if ran and kind in ("write", "destructive") else []


def effective_timeout_ms(request: CallRequest, manifest: ToolManifest) -> float:
    """min(the call's timeout or the tool's default, time left until the deadline, the tool's maximum)."""
    limits = manifest.limits
    constraints = request.constraints
    candidates: list[float] = [constraints.timeout_ms or limits.timeout_ms_default, limits.timeout_ms_max]
    if constraints.deadline_unix_ms is not None:
        candidates.append(max(0.0, constraints.deadline_unix_ms - time.time() * 1000))
    return min(candidates)
