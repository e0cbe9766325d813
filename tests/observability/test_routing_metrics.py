"""The router's decisions are counted: routed or fallback, with their confidence, tools shown and time."""

from __future__ import annotations

from colonnade.catalog.catalog import Catalog
from colonnade.config import RoutingSettings, Settings
from colonnade.runtime.gateway import Gateway
from tests.observability.conftest import TOOL, sample


async def test_decisions_fallbacks_and_confidence_are_counted(catalog: Catalog) -> None:
    routing = RoutingSettings(enabled=True, top_k=2, confidence_threshold=0.5, fallback_tools=[TOOL])
    gateway = Gateway(Settings(routing=routing), catalog=catalog)
    try:
        gateway.router.route("fetch one customer record by id")
        gateway.router.route("zebra quantum marmalade")  # nothing matches: confidence 0, the fallback
        metrics = gateway.metrics
        routed = sample(metrics, "colonnade_routing_decisions_total", outcome="routed")
        fallback = sample(metrics, "colonnade_routing_decisions_total", outcome="fallback")
        assert (routed + fallback, fallback >= 1) == (2, True)
        assert sample(metrics, "colonnade_routing_confidence_count") == 2
        assert sample(metrics, "colonnade_routing_confidence_bucket", le="0.05") >= 1  # the fallback's
        assert sample(metrics, "colonnade_routing_tools_shown_count") == 2
        assert sample(metrics, "colonnade_routing_duration_seconds_sum") > 0
    finally:
        await gateway.aclose()
