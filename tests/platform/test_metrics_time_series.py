"""`colonnade__metrics_time_series` on a governed gateway: the stored history of a tool and of its API.

Real calls through the pipeline are rolled up and written to the store (the flush the gateway runs
in the background, run here at once); the tool then answers their counts per bucket, for the tool
and for its API. Another tenant's tool is unknown to the caller, and a consumer is not given the tool.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.governed import Governed, governed_gateway


@pytest.fixture(scope="module")
def governed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Governed]:
    with governed_gateway(tmp_path_factory.mktemp("series-tool")) as running:
        yield running


def _series(governed: Governed, token: str, **arguments: Any) -> dict[str, Any]:
    status, result = governed.call(token, "colonnade__metrics_time_series", **arguments)
    assert status in (200, 400, 403, 404, 422), result
    return result


def test_the_series_counts_the_calls_made(governed: Governed) -> None:
    admin = governed.token("admin")
    for item in ("I-1", "I-2", "missing"):
        governed.call(admin, "acme:items:read_item", item_id=item)
    history = governed.running.gateway.history
    assert history is not None
    governed.running.run(history.flush())

    tool = _series(governed, admin, subject="acme:items:read_item")
    assert tool["status"] == "success", tool
    points = tool["output"]["points"]
    assert tool["output"]["dimension"] == "tool" and tool["output"]["resolution_s"] == 60
    assert sum(p["calls"] for p in points) >= 3
    assert all(p["p50_s"] is not None for p in points if p["calls"])

    api = _series(governed, admin, subject="acme:items", window="day")
    assert api["status"] == "success" and api["output"]["resolution_s"] == 300
    assert sum(p["calls"] for p in api["output"]["points"]) >= sum(p["calls"] for p in points)


def test_slow_requests_ranks_the_calls_by_their_recorded_duration(governed: Governed) -> None:
    admin = governed.token("admin")
    governed.call(admin, "acme:items:read_item", item_id="I-1")
    status, result = governed.call(admin, "colonnade__slow_requests", window_minutes=60, limit=5)
    assert status == 200 and result["status"] == "success", result
    calls = result["output"]["calls"]
    durations = [c["duration_ms"] for c in calls]
    assert calls and durations == sorted(durations, reverse=True)
    assert all(c["tool"] and not c["tool"].startswith("globex:") for c in calls)
    assert result["output"]["scanned"] >= len(calls)
    fast_only = governed.call(admin, "colonnade__slow_requests", min_ms=10_000_000)[1]
    assert fast_only["output"]["calls"] == []


def test_what_the_caller_may_not_see_is_unknown(governed: Governed) -> None:
    other = _series(governed, governed.token("admin"), subject="globex:items:read_item")
    assert other["error"]["code"] == "I-REQ-UNKNOWN-RESOURCE", other
    consumer = _series(governed, governed.token("consumer", sub="c-1"), subject="acme:items")
    assert consumer["error"]["code"] == "I-REQ-UNKNOWN-TOOL", consumer


async def test_the_series_is_a_resource_too(governed: Governed) -> None:
    import json

    async with governed.mcp(governed.token("admin", sub="reader")) as client:
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        read = await client.read_resource("colonnade://metrics/acme:items/series")
    assert "colonnade://metrics/{subject}/series" in templates
    body = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert body["subject"] == "acme:items" and body["dimension"] == "api" and "points" in body
