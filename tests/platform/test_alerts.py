"""Alerts over a governed gateway: a tool failing past its SLO fires `tool_success_rate` (and its
backend's circuit opens), shown to who may see the tool and to no other tenant."""

from __future__ import annotations

from colonnade.calls.stages.circuit import CircuitBreaker, CircuitState
from colonnade.governance.personas import Persona
from colonnade.platform.alerts import MIN_CALLS
from tests.support.governed import Governed
from tests.support.platform_personas import persona_token


def _alerts(governed: Governed, token: str, **arguments: object) -> list[dict[str, object]]:
    _, body = governed.call(token, "colonnade__list_alerts", **arguments)
    assert body["status"] == "success", body
    return list(body["output"]["alerts"])


def test_a_failing_tool_fires_its_success_rate_alert_for_its_tenant_only(governed: Governed) -> None:
    admin, developer = persona_token(governed, Persona.ADMIN), persona_token(governed, Persona.DEVELOPER)
    gateway = governed.running.gateway
    breaker = next(stage for stage in gateway.pipeline.stages if isinstance(stage, CircuitBreaker))
    gateway.metrics.track_circuits(breaker)  # as `colonnade serve` does (cli/_launch.py)
    assert not [a for a in _alerts(governed, admin) if a["subject"] == "acme:lab:read_item"]
    for _ in range(MIN_CALLS):
        _, body = governed.call(admin, "acme:lab:read_item", item_id="I-1", fault="500")
        assert body["status"] != "success"
    for _ in range(100):  # the breaker opens after 20 attempts in its window, 90% failed (however slow)
        if CircuitState.OPEN in {state for state, _ in breaker.states().values()}:
            break
        governed.call(admin, "acme:lab:read_item", item_id="I-1", fault="500")
    firing = {(a["rule"], a["subject"]): a for a in _alerts(governed, admin)}
    alert = firing[("tool_success_rate", "acme:lab:read_item")]
    assert alert["state"] == "firing" and alert["value"] == 0.0 and alert["threshold"] == 0.99
    assert any(rule == "circuit_open" for rule, _ in firing)  # the backend kept failing: its circuit opened
    assert ("tool_success_rate", "acme:lab:read_item") in {
        (a["rule"], a["subject"]) for a in _alerts(governed, developer)
    }
    globex = governed.token(Persona.ADMIN, tenant="globex", sub="g-admin")
    assert not [a for a in _alerts(governed, globex) if str(a["subject"]).startswith("acme:")]
    assert [a for a in _alerts(governed, admin, state="all") if a["subject"] == "acme:lab:read_item"]
