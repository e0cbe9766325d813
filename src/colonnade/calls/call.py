"""The immutable context a call carries through the pipeline stages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from colonnade.calls.envelope import CallError, CallMetrics, CallRequest, CallResult, CallStatus, Provenance
from colonnade.catalog.tool import Tool

__all__ = ["DEFAULT_TIMEOUT_MS", "Call"]

DEFAULT_TIMEOUT_MS = 30_000


@dataclass(frozen=True, slots=True)
class Call:
    """A parsed request with its resolved tool; a stage that changes it makes a copy (`evolve`)."""

    request: CallRequest
    tool: Tool
    started: float = field(default_factory=time.perf_counter)
    deadline: float = 0.0

    @classmethod
    def start(cls, request: CallRequest, tool: Tool) -> Call:
        now = time.perf_counter()
        return cls(request, tool, now, now + effective_timeout_ms(request, tool) / 1000)

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
    ) -> CallResult:
        """Close the call with an outcome; metrics and provenance are always filled."""
        return CallResult(
            call_id=self.request.call_id,
            status=status,
            output=output,
            error=error,
            metrics=CallMetrics(duration_ms=round((time.perf_counter() - self.started) * 1000, 3)),
            provenance=Provenance(
                tool_id=self.tool.canonical_name, tool_version=self.tool.version, digest=self.tool.digest
            ),
            warnings=warnings or [],
        )


def effective_timeout_ms(request: CallRequest, tool: Tool) -> float:
    """min(call timeout, time left until the call's deadline, the tool's own timeout)."""
    candidates: list[float] = []
    constraints = request.constraints
    if constraints.timeout_ms is not None:
        candidates.append(constraints.timeout_ms)
    if constraints.deadline_unix_ms is not None:
        candidates.append(max(0.0, constraints.deadline_unix_ms - time.time() * 1000))
    binding = tool.binding
    if binding is not None and binding.timeout_ms is not None:
        candidates.append(binding.timeout_ms)
    return min(candidates) if candidates else DEFAULT_TIMEOUT_MS
