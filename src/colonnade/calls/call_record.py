"""What the inner stages learn of a call, for the outer stages that wrap them.

A `Call` flows inward only: a stage hands the next one a copy (`Call.evolve`), so what a later
stage learns never comes back on the call its wrapper holds. The few facts an outer stage needs
after the inner ones ran go into one mutable record the call carries from `Call.start`: every copy
of the call shares it, so the stage that learns a fact writes it on the call it was given, and the
stage that wraps it reads it on its own. No context variable: the record is on the road the call
takes, and a call started inside another (a resume check's own pipeline) has its own.

Kept here: the tool the call resolved to, with its p95 objective and the call's timeout (written
by `InFlight` right after resolution, read by `Observe` so that a call ending in an exception or a
cancellation is still counted under its tool).
"""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.catalog.tool import Tool

__all__ = ["CallRecord", "Resolution"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """The tool a call resolved to, its p95 objective in seconds (None: none set), its timeout in ms."""

    tool: Tool
    slo_p95_s: float | None
    timeout_ms: float


@dataclass(slots=True)
class CallRecord:
    resolution: Resolution | None = None
