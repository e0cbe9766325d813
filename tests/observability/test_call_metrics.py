"""Prometheus metrics move with calls and are served at /metrics in the text exposition format."""

from __future__ import annotations

import httpx2
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette

from colonnade.catalog.catalog import Catalog
from colonnade.observability.metrics import DURATION_BUCKETS_S, GatewayMetrics
from colonnade.surfaces.metrics_route import metrics_route
from tests.observability.conftest import TOOL, Answer, LogCapture, observed, request, sample
from tests.support.loopback import serve_in_thread


async def test_calls_move_the_counters_and_the_histogram(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    for _ in range(3):
        await gateway.service.call(request())
    await gateway.service.call(request(input={"fail_with": "R-UPSTREAM-429"}))
    metrics = gateway.metrics
    assert sample(metrics, "colonnade_calls_total", tool=TOOL, status="success", code="") == 3
    assert (
        sample(metrics, "colonnade_calls_total", tool=TOOL, status="retryable_error", code="R-UPSTREAM-429")
        == 1
    )
    assert sample(metrics, "colonnade_call_duration_seconds_count", tool=TOOL, status="success") == 3
    assert (
        sample(metrics, "colonnade_call_duration_seconds_bucket", tool=TOOL, status="success", le="30.0") == 3
    )
    assert sample(metrics, "colonnade_call_duration_seconds_sum", tool=TOOL, status="success") > 0
    assert sample(metrics, "colonnade_calls_in_flight", tool=TOOL) == 0


def test_the_buckets_span_half_a_millisecond_to_thirty_seconds() -> None:
    assert DURATION_BUCKETS_S[0] == 0.0005 and DURATION_BUCKETS_S[-1] == 30.0
    assert list(DURATION_BUCKETS_S) == sorted(DURATION_BUCKETS_S)


def test_the_catalog_size_is_read_at_each_scrape(catalog: Catalog) -> None:
    metrics = GatewayMetrics()
    metrics.track_catalog(catalog)
    assert sample(metrics, "colonnade_catalog_tools") == len(catalog) > 0
    catalog.remove("acme", "crm")
    assert sample(metrics, "colonnade_catalog_tools") == 0


async def test_two_gateways_in_one_process_keep_separate_metrics(logs: LogCapture, catalog: Catalog) -> None:
    first, second = observed(catalog, Answer()), observed(catalog, Answer())
    await first.service.call(request())
    assert sample(first.metrics, "colonnade_calls_total", tool=TOOL, status="success", code="") == 1
    assert sample(second.metrics, "colonnade_calls_total", tool=TOOL, status="success", code="") == 0


async def test_metrics_endpoint_serves_prometheus_text(logs: LogCapture, catalog: Catalog) -> None:
    gateway = observed(catalog, Answer())
    gateway.metrics.track_catalog(catalog)
    await gateway.service.call(request())
    await gateway.service.call(request("no_such_tool"))
    app = Starlette(routes=[metrics_route(gateway.metrics)])
    with serve_in_thread(app) as url:
        response = httpx2.get(f"{url}/metrics")
        openmetrics = httpx2.get(
            f"{url}/metrics", headers={"accept": "application/openmetrics-text; version=1.0.0"}
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    families = {family.name: family for family in text_string_to_metric_families(response.text)}
    assert {"colonnade_calls", "colonnade_call_duration_seconds", "colonnade_calls_in_flight"} <= set(
        families
    )
    calls = {
        (s.labels["tool"], s.labels["status"], s.labels["code"]): s.value
        for s in families["colonnade_calls"].samples
        if s.name == "colonnade_calls_total"
    }
    assert calls == {
        (TOOL, "success", ""): 1.0,
        ("(unresolved)", "invalid_request", "I-REQ-UNKNOWN-TOOL"): 1.0,
    }
    assert families["colonnade_catalog_tools"].samples[0].value == len(catalog)
    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")
    assert openmetrics.text.rstrip().endswith("# EOF")
