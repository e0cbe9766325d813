"""Reading a real `GatewayMetrics` registry, and percentiles estimated from histogram buckets."""

from __future__ import annotations

import math

import pytest

from colonnade.observability.metrics import DURATION_BUCKETS_S, GatewayMetrics
from colonnade.platform.metric_values import Estimate, bucket_quantile, read_stats
from colonnade.surfaces.pages.metrics_page import format_estimate


def test_a_quantile_is_interpolated_inside_its_bucket() -> None:
    buckets = [(0.1, 10.0), (0.2, 30.0), (math.inf, 30.0)]
    assert bucket_quantile(0.5, buckets) == Estimate(0.1 + 0.1 * (15 - 10) / 20)
    assert bucket_quantile(0.2, buckets) == Estimate(0.1 * 6 / 10)
    assert bucket_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]) is None
    assert bucket_quantile(0.5, []) is None


def test_a_quantile_past_the_last_finite_bucket_is_only_a_lower_bound() -> None:
    estimate = bucket_quantile(0.95, [(1.0, 1.0), (30.0, 2.0), (math.inf, 10.0)])
    assert estimate == Estimate(30.0, beyond_last_bucket=True)
    assert format_estimate(estimate) == "> 30.00 s"
    assert format_estimate(Estimate(0.0032)) == "≈ 3.2 ms"
    assert format_estimate(None) == "—"


@pytest.mark.parametrize("q", [0.0, 1.0, -0.5])
def test_quantiles_outside_0_1_are_refused(q: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        bucket_quantile(q, [(math.inf, 1.0)])


def test_read_stats_counts_by_tool_status_and_code() -> None:
    metrics = GatewayMetrics()
    metrics.track_catalog([1, 2, 3])
    for _ in range(3):
        metrics.for_tool("acme:crm:get_customer").record("success", "", 0.004)
    metrics.for_tool("acme:crm:get_customer").record("terminal_error", "I-REQ-UPSTREAM-NOT-FOUND", 0.02)
    metrics.for_tool("acme:crm:search").record("terminal_error", "I-REQ-UPSTREAM-NOT-FOUND", 0.02)
    metrics.for_tool("acme:crm:search").record("cancelled", "", 0.02)
    metrics.for_tool("acme:crm:idle").in_flight.inc()
    stats = read_stats(metrics)
    assert stats.catalog_tools == 3
    assert stats.total == 6
    assert [t.tool for t in stats.tools] == ["acme:crm:get_customer", "acme:crm:search", "acme:crm:idle"]
    first = stats.tools[0]
    assert dict(first.by_status) == {"success": 3, "terminal_error": 1}
    assert first.p50 is not None and 0.0025 < first.p50.seconds <= 0.005
    assert stats.tools[2].in_flight == 1 and stats.tools[2].total == 0
    assert stats.statuses[-1] == "cancelled" and "success_prep" not in stats.statuses
    [error] = stats.errors
    assert (error.code, error.status, error.calls) == ("I-REQ-UPSTREAM-NOT-FOUND", "terminal_error", 2)
    assert set(error.tools) == {"acme:crm:get_customer", "acme:crm:search"}
    assert stats.p95 is not None and stats.p95.seconds <= DURATION_BUCKETS_S[5]


def test_read_stats_of_an_idle_gateway_is_empty() -> None:
    stats = read_stats(GatewayMetrics())
    assert stats.total == 0 and stats.tools == () and stats.errors == () and stats.p50 is None
