"""Calls per consumer and tool version: the labels the operator allows, each with bounded values."""

from __future__ import annotations

from colonnade.calls.pipeline import Pipeline
from colonnade.calls.service import CallService
from colonnade.calls.stages.observe import Observe
from colonnade.calls.stages.resolve import Resolve
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings, TelemetrySettings
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.observability.consumer_metrics import OTHER, ConsumerLabel
from colonnade.observability.metrics import GatewayMetrics
from colonnade.runtime.gateway import Gateway
from tests.observability.conftest import TOOL, Answer, LogCapture, request, sample


def _service(
    catalog: Catalog, labels: list[ConsumerLabel], max_values: int = 100
) -> tuple[CallService, GatewayMetrics]:
    metrics = GatewayMetrics()
    metrics.track_consumers(labels, max_values=max_values)
    observe = Observe(metrics)
    return CallService(Pipeline([observe, Resolve(catalog), observe.in_flight(), Answer()])), metrics


def _agent(name: str, tenant: str = "acme") -> Principal:
    return Principal(PrincipalKind.AGENT, name, tenant=tenant)


async def test_calls_and_seconds_are_counted_per_tool_version_and_consumer(
    logs: LogCapture, catalog: Catalog
) -> None:
    service, metrics = _service(catalog, ["tenant", "agent"])
    await service.call(request(), _agent("bot-1"))
    await service.call(request(), _agent("bot-1"))
    await service.call(request(input={"fail_with": "R-TIMEOUT-001"}), _agent("bot-2"))
    labels = {"tool": TOOL, "version": "1.0.0", "tenant": "acme"}
    assert sample(metrics, "colonnade_consumer_calls_total", **labels, status="success", agent="bot-1") == 2
    failed = {**labels, "status": "retryable_error", "agent": "bot-2"}
    assert sample(metrics, "colonnade_consumer_calls_total", **failed) == 1
    assert (
        sample(metrics, "colonnade_consumer_call_seconds_total", **labels, status="success", agent="bot-1")
        > 0
    )


async def test_a_label_not_allowed_is_not_a_label(logs: LogCapture, catalog: Catalog) -> None:
    service, metrics = _service(catalog, ["tenant"])
    await service.call(request(), _agent("bot-1"))
    families = {m.name: m for m in metrics.registry.collect()}
    (series,) = [s for s in families["colonnade_consumer_calls"].samples if s.name.endswith("_total")]
    assert set(series.labels) == {"tool", "version", "status", "tenant"}


async def test_values_past_the_bound_are_counted_as_other(logs: LogCapture, catalog: Catalog) -> None:
    service, metrics = _service(catalog, ["principal"], max_values=2)
    for name in ("a", "b", "c", "d", "a"):
        await service.call(request(), _agent(name))
    base = {"tool": TOOL, "version": "1.0.0", "status": "success"}
    counted = {
        name: sample(metrics, "colonnade_consumer_calls_total", **base, principal=name) for name in "abcd"
    }
    assert counted == {"a": 2, "b": 1, "c": 0, "d": 0}
    assert sample(metrics, "colonnade_consumer_calls_total", **base, principal=OTHER) == 2


async def test_the_gateway_takes_the_labels_from_its_settings(catalog: Catalog) -> None:
    telemetry = TelemetrySettings(consumer_labels=["principal"], consumer_label_values_max=5)
    gateway = Gateway(Settings(telemetry=telemetry), catalog=catalog)
    try:
        consumers = gateway.metrics.consumers
        assert consumers is not None and (consumers.labels, consumers.max_values) == (("principal",), 5)
    finally:
        await gateway.aclose()
