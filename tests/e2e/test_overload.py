"""Overload and failing backends against a real gateway process: refusals are immediate, typed and counted.

The bound on calls in flight refuses a REST call with 503, Retry-After and `R-CAP-OVERLOAD`; a
backend that keeps failing opens its circuit, after which calls fail fast with
`R-UPSTREAM-CIRCUIT-OPEN`. `/metrics` shows both.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.fault_gateway import Serve

pytestmark = pytest.mark.e2e


def _sample(metrics: str, series: str) -> float:
    found = re.search(rf"^{re.escape(series)} (\S+)$", metrics, re.MULTILINE)
    assert found is not None, f"{series} not in /metrics"
    return float(found.group(1))


def test_past_the_bound_on_calls_in_flight_a_call_is_refused_at_once(serve: Serve) -> None:
    gateway = serve(max_calls_in_flight=1)
    with ThreadPoolExecutor(1) as pool:
        held = gateway.call_slowly(pool, backend_ms=3_000)
        refused = gateway.call()
        metrics = gateway.metrics()
        assert held.result().json()["status"] == "success"
    assert refused.status_code == 503
    assert int(refused.headers["retry-after"]) >= 1
    result = refused.json()
    assert result["status"] == "retryable_error"
    assert result["error"]["code"] == "R-CAP-OVERLOAD"
    assert result["error"]["details"]["reason"] == "in_flight_limit"
    assert _sample(metrics, 'colonnade_admission_shed_total{reason="in_flight_limit"}') == 1
    assert _sample(metrics, "colonnade_admission_in_flight") == 1
    assert _sample(metrics, "colonnade_admission_max_in_flight") == 1


def test_a_backend_that_keeps_failing_opens_its_circuit_and_calls_fail_fast(
    serve: Serve, fault_url: str
) -> None:
    gateway = serve()
    backend = fault_url.removeprefix("http://")
    codes = [gateway.call("503").json()["error"]["code"] for _ in range(10)]  # 3 attempts each
    # The default circuit opens once 20 attempts in 10 s were at least 90 % failures: on the 7th call.
    assert codes[:6] == ["R-UPSTREAM-UNAVAILABLE"] * 6
    assert codes[7:] == ["R-UPSTREAM-CIRCUIT-OPEN"] * 3
    refused = gateway.call("ok").json()  # the backend would answer now, but the circuit is open
    assert refused["error"]["code"] == "R-UPSTREAM-CIRCUIT-OPEN"
    assert 0 < refused["error"]["details"]["retry_after_ms"] <= 5_000
    assert backend not in json.dumps(refused["error"])  # clients never see where backends live
    assert f"the circuit of backend {backend} opened" in gateway.log.read_text()  # operators do
    metrics = gateway.metrics()
    assert _sample(metrics, f'colonnade_backend_circuit_state{{backend="{backend}"}}') == 2
    assert _sample(metrics, f'colonnade_backend_circuit_opened_total{{backend="{backend}"}}') == 1
