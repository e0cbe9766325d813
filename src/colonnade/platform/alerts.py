"""The gateway's own alerts: rules over its figures, evaluated in the gateway, state in the store.

Rules (each alert is one rule about one subject):
- `tool_success_rate`: a tool's share of successful calls since start is below its manifest SLO
  (`slo.success_rate_min`), once it has had `MIN_CALLS` calls (caller errors do not count);
- `tool_p95_latency`: a tool's estimated p95 latency is above its manifest's `slo.p95_latency_ms_max`;
- `server_down`: a downstream MCP server is down;
- `circuit_open`: a backend's circuit breaker is open;
- `audit_chain_broken`: the audit log's hash chain no longer verifies.
The call figures are this process's (each replica evaluates its own); a round stores what fires now
and resolves what no longer does (`AlertStore.reconcile`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import UTC, datetime

from colonnade.calls.manifest import Manifests
from colonnade.governance.audit.readers import chain_report
from colonnade.platform.metric_values import read_stats
from colonnade.platform.services import PlatformServices
from colonnade.store.alerts_repo import AlertRecord, AlertStore

__all__ = ["MIN_CALLS", "RULES", "AlertRules"]

logger = logging.getLogger(__name__)

MIN_CALLS = 10
"""Calls a tool must have had before its success rate can fire (a first failure is not a trend)."""
RULES = ("tool_success_rate", "tool_p95_latency", "server_down", "circuit_open", "audit_chain_broken")
ALERTS_URI = "colonnade://alerts"
_CALLER_ERRORS = frozenset({"invalid_request"})
_EPOCH = datetime.fromtimestamp(0, UTC)


def _alert(
    rule: str, subject: str, tenant: str | None, message: str, value: float | None, threshold: float | None
) -> AlertRecord:
    return AlertRecord(rule, subject, tenant, "firing", message, value, threshold, _EPOCH, None, _EPOCH)


class AlertRules:
    def __init__(self, services: PlatformServices, store: AlertStore, manifests: Manifests) -> None:
        self.services = services
        self.store = store
        self.manifests = manifests
        self._firing: frozenset[tuple[str, str]] = frozenset()

    async def evaluate(self) -> list[AlertRecord]:
        """One round: every rule, stored; returns every alert (firing and resolved)."""
        firing = [*self._tool_alerts(), *(await self._server_alerts()), *self._circuit_alerts()]
        firing.extend(await self._audit_alerts())
        alerts = await self.store.reconcile(firing, datetime.now(UTC))
        now_firing = frozenset((a.rule, a.subject) for a in alerts if a.state == "firing")
        if now_firing != self._firing and self.services.changes is not None:
            await self.services.changes.publish([ALERTS_URI])
        self._firing = now_firing
        return alerts

    async def run(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.evaluate()
            except Exception:  # the store may be briefly away; the next round retries
                logger.exception("evaluating the gateway's alerts failed")

    def _tool_alerts(self) -> Iterable[AlertRecord]:
        catalog = self.services.catalog
        for calls in read_stats(self.services.metrics).tools:
            tool = catalog.get(calls.tool)
            if tool is None:
                continue
            slo = self.manifests.for_tool(tool).slo
            counted = {status: n for status, n in calls.by_status.items() if status not in _CALLER_ERRORS}
            total = sum(counted.values())
            if total >= MIN_CALLS:
                rate = counted.get("success", 0) / total
                if rate < slo.success_rate_min:
                    yield _alert(
                        "tool_success_rate",
                        tool.canonical_name,
                        tool.tenant,
                        f"{tool.canonical_name}: {rate:.1%} of {total} calls succeeded, below its SLO of "
                        f"{slo.success_rate_min:.1%}",
                        rate,
                        slo.success_rate_min,
                    )
            limit = slo.p95_latency_ms_max
            if limit is not None and calls.p95 is not None and calls.p95.seconds * 1000 > limit:
                yield _alert(
                    "tool_p95_latency",
                    tool.canonical_name,
                    tool.tenant,
                    f"{tool.canonical_name}: p95 latency about {calls.p95.seconds * 1000:.0f} ms, "
                    f"above its SLO of {limit} ms",
                    calls.p95.seconds * 1000,
                    float(limit),
                )

    async def _server_alerts(self) -> list[AlertRecord]:
        servers = (await self.services.status()).get("servers", [])
        return [
            _alert(
                "server_down",
                str(server["name"]),
                str(server.get("tenant")) if server.get("tenant") else None,
                f"server {server['name']} is down: {server.get('last_error') or 'no answer'}",
                None,
                None,
            )
            for server in servers
            if server.get("state") == "down"
        ]

    def _circuit_alerts(self) -> Iterable[AlertRecord]:
        for family in self.services.metrics.registry.collect():
            if family.name != "colonnade_backend_circuit_state":
                continue
            for sample in family.samples:
                if sample.value >= 2:
                    backend = sample.labels["backend"]
                    yield _alert(
                        "circuit_open", backend, None, f"the circuit of backend {backend} is open", 2.0, None
                    )

    async def _audit_alerts(self) -> list[AlertRecord]:
        audit = self.services.audit
        if audit is None:
            return []
        report = await chain_report(audit)
        if report.broken is None:
            return []
        broken = report.broken
        message = f"the audit chain breaks at record {broken.seq}: {broken.problem}"
        return [_alert("audit_chain_broken", "audit", None, message, float(broken.seq), None)]
