"""`list_alerts`: the gateway's alerts, evaluated now, as a caller may see them.

A tool's alert shows to whoever may see the tool; a server's to its tenant; gateway-wide alerts
(a backend's circuit, the audit chain) to admins and security officers.
"""

from __future__ import annotations

from typing import Any

from colonnade.governance.authorization import permits
from colonnade.governance.personas import Persona, Scope, persona_of
from colonnade.governance.principal import Principal
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.personas import READERS_OF_FIGURES
from colonnade.platform.schemas import array, obj, output, string
from colonnade.platform.services import PlatformServices, need
from colonnade.store.alerts_repo import AlertRecord

__all__ = ["ALERT_TOOLS", "alert_view", "visible_alerts"]

_WIDE_READERS = frozenset({Persona.ADMIN, Persona.SECURITY})
_ALERT = output(
    ("rule", "subject", "state", "message", "fired_at"),
    rule=string(),
    subject=string(),
    tenant={"type": ["string", "null"]},
    state=string(enum=["firing", "resolved"]),
    message=string(),
    value={"type": ["number", "null"]},
    threshold={"type": ["number", "null"]},
    fired_at=string(),
    resolved_at={"type": ["string", "null"]},
)


def alert_view(alert: AlertRecord) -> dict[str, Any]:
    return {
        "rule": alert.rule,
        "subject": alert.subject,
        "tenant": alert.tenant,
        "state": alert.state,
        "message": alert.message,
        "value": alert.value,
        "threshold": alert.threshold,
        "fired_at": alert.fired_at.isoformat(),
        "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at is not None else None,
    }


async def visible_alerts(services: PlatformServices, principal: Principal) -> list[AlertRecord]:
    alerts = await need(services.alerts, "alert rules").evaluate()
    allowed = services.authorizer.visible(principal)
    if allowed is None:
        return alerts
    wide = persona_of(principal.persona) in _WIDE_READERS and principal.tenant is None

    def sees(alert: AlertRecord) -> bool:
        if alert.rule.startswith("tool_"):
            return permits(allowed, alert.subject)
        if alert.tenant is None:
            return persona_of(principal.persona) in _WIDE_READERS
        return wide or alert.tenant == principal.tenant

    return [alert for alert in alerts if sees(alert)]


async def list_alerts(
    services: PlatformServices, principal: Principal, args: dict[str, Any]
) -> dict[str, Any]:
    state = args.get("state", "firing")
    alerts = [a for a in await visible_alerts(services, principal) if state == "all" or a.state == state]
    return {"alerts": [alert_view(alert) for alert in alerts]}


ALERT_TOOLS = (
    CoreTool(
        name="list_alerts",
        adr_name="list alerts",
        group="Observability and metrics",
        title="List alerts",
        description=(
            "The gateway's alerts, evaluated now: tools below their success-rate or latency SLO, servers "
            "down, open circuits, a broken audit chain. Firing by default; resolved ones too with state."
        ),
        input_schema=obj(
            state=string("firing (default), resolved or all", enum=["firing", "resolved", "all"])
        ),
        output_schema=output(("alerts",), alerts=array(_ALERT)),
        scopes=(Scope.METRICS_READ,),
        personas=READERS_OF_FIGURES,
        run=list_alerts,
    ),
)
