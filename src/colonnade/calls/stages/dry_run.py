"""Dry run: a call that asked for it has been validated and authorized; stop before execution."""

from __future__ import annotations

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallResult, CallStatus
from colonnade.calls.pipeline import Next

__all__ = ["DryRun"]


class DryRun:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        if call.request.dry_run:
            return call.result(CallStatus.SUCCESS, output=None, warnings=["dry run: validated, not executed"])
        return await next(call)
