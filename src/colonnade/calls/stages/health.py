"""Health gate: a tool whose backend is known to be unhealthy fails fast, without calling it.

The answer does not name the readiness URL (clients never see where backends live); the health
monitor logs it when the probe starts failing.
"""

from __future__ import annotations

from colonnade.adapters.health_monitor import HealthMonitor
from colonnade.calls.call import Call
from colonnade.calls.call_errors import error
from colonnade.calls.envelope import CallResult
from colonnade.calls.pipeline import Next

__all__ = ["HealthGate"]


class HealthGate:
    def __init__(self, monitor: HealthMonitor) -> None:
        self.monitor = monitor

    async def __call__(self, call: Call, next: Next) -> CallResult:
        url = call.manifest.health.readiness
        if url is not None and not self.monitor.healthy(url):
            status, err = error(
                "S-TOOL-UNAVAILABLE",
                f"'{call.tool.canonical_name}' is unavailable: its backend's readiness check is failing",
                since=self.monitor.failing_since(url),
            )
            return call.result(status, error=err)
        return await next(call)
