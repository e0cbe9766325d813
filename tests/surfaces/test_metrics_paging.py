"""`/ui/metrics` at thousands of tools: the busiest `PAGE_ROWS` per table, a name filter and paging.

The per-process table reads a real metrics registry with 3,000 tools called (each a different
number of times); the history table a window's totals for as many tools. A served gateway refuses a
page number that is not one, with the fix named.
"""

from __future__ import annotations

import re
from pathlib import Path

from colonnade.observability.metrics import GatewayMetrics
from colonnade.platform.metric_values import read_stats
from colonnade.platform.usage import HistoryFigures, SubjectTotal
from colonnade.surfaces.pages.history_charts import history_charts
from colonnade.surfaces.pages.metrics_page import metrics_page
from colonnade.surfaces.pages.table_paging import PAGE_ROWS, parse_page
from tests.surfaces.rest_harness import demo_contract_file, gateway_settings, serve_gateway

TOOLS = 3000


def _tool(n: int) -> str:
    return f"acme:api{n % 40}:op_{n:04d}"


def _calls(n: int) -> int:
    return n % 97 + 1


def _metrics() -> GatewayMetrics:
    metrics = GatewayMetrics()
    for n in range(TOOLS):
        tool = metrics.for_tool(_tool(n))
        for _ in range(_calls(n)):
            tool.record("success", "", 0.01)
    return metrics


def _rows(body: str, key: str) -> list[str]:
    return re.findall(rf'<tr data-{key}="([^"]+)"', body)


def test_the_calls_table_shows_the_busiest_page_of_thousands() -> None:
    stats = read_stats(_metrics())
    body = str(metrics_page(stats, query=None, page=1, keep={"window": "hour"}))
    shown = _rows(body, "tool")
    assert len(shown) == PAGE_ROWS
    expected = sorted(range(TOOLS), key=lambda n: (-_calls(n), _tool(n)))[:PAGE_ROWS]
    assert shown == [_tool(n) for n in expected]
    assert f"Tools 1 to {PAGE_ROWS} of {TOOLS}" in body
    assert 'href="/ui/metrics?window=hour&amp;page=2"' in body and 'id="calls-pager-prev"' not in body
    assert len(body) < 200_000  # not thousands of rows


def test_the_filter_and_the_page_pick_the_rows() -> None:
    stats = read_stats(_metrics())
    matching = [n for n in range(TOOLS) if "op_1" in _tool(n)]  # op_1000..op_1999
    ordered = [_tool(n) for n in sorted(matching, key=lambda n: (-_calls(n), _tool(n)))]
    body = str(metrics_page(stats, query="OP_1", page=3, keep={"window": "day"}))
    assert _rows(body, "tool") == ordered[2 * PAGE_ROWS : 3 * PAGE_ROWS]
    assert (
        f"Tools {2 * PAGE_ROWS + 1} to {3 * PAGE_ROWS} of {len(matching)} matching &quot;op_1&quot;" in body
    )
    assert 'href="/ui/metrics?window=day&amp;q=op_1&amp;page=2"' in body
    assert 'href="/ui/metrics?window=day&amp;q=op_1&amp;page=4"' in body
    assert 'name="q" value="OP_1"' in body


def test_a_page_past_the_last_shows_the_last() -> None:
    stats = read_stats(_metrics())
    body = str(metrics_page(stats, query="op_0001", page=99))
    assert _rows(body, "tool") == [_tool(1)]
    assert 'data-page="1"' in body and 'id="calls-pager-next"' not in body


def test_the_history_tools_table_is_paged_too() -> None:
    totals = tuple(
        SubjectTotal(_tool(n), "tool", TOOLS - n, 0, 0.01, 0.02) for n in range(TOOLS)
    )  # busiest first, as CallFigures orders them
    figures = HistoryFigures("hour", 60, None, (), (), totals)
    body = str(history_charts(figures, None, 2))
    assert _rows(body, "subject") == [_tool(n) for n in range(PAGE_ROWS, 2 * PAGE_ROWS)]
    assert 'id="history-tools-pager-prev"' in body and 'id="history-tools-pager-next"' in body


def test_page_numbers_are_read_strictly() -> None:
    assert [parse_page(raw) for raw in (None, "", "1", "12")] == [1, 1, 1, 12]
    assert [parse_page(raw) for raw in ("0", "-1", "x", "1.5", "²")] == [None] * 5


def test_a_served_page_refuses_a_bad_page_number_and_filters_real_calls(
    backend_url: str, tmp_path: Path
) -> None:
    contracts = [demo_contract_file(tmp_path, name, backend_url) for name in ("crm", "billing")]
    with serve_gateway(gateway_settings(tmp_path / "data", contracts)) as running:
        client = running.client
        for body in (
            {"tool_id": "acme:crm:get_customer", "input": {"customer_id": "C-1001"}},
            {"tool_id": "acme:billing:list_invoices", "input": {}},
        ):
            assert client.post("/v1/calls", json=body).json()["status"] == "success"
        refused = client.get("/ui/metrics", params={"page": "0"})
        assert refused.status_code == 400 and "whole number from 1" in refused.text
        filtered = client.get("/ui/metrics", params={"q": "billing"})
    assert filtered.status_code == 200
    assert _rows(filtered.text, "tool") == ["acme:billing:list_invoices"]
    assert "matching &quot;billing&quot;" in filtered.text
