"""What does `/ui/metrics` cost at thousands of tools? The per-tool tables show a page at a time.

Fills a real metrics registry with N tools called (each a few times) and a window's history totals
for as many tools, then times what the page view does: `read_stats` over the registry, the
history section and the page, for the first page, a filtered page, and (for comparison) the size
of the HTML. Median of several rounds, wall-clock milliseconds.

Run: .venv/bin/python bench/metrics_page.py [--sizes 100,1000,5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from colonnade.observability.metrics import GatewayMetrics
from colonnade.platform.metric_values import read_stats
from colonnade.platform.usage import HistoryFigures, SubjectTotal
from colonnade.surfaces.pages.history_charts import history_charts
from colonnade.surfaces.pages.metrics_page import metrics_page


def _tool(n: int) -> str:
    return f"acme:api{n % 40}:op_{n:05d}"


def _filled(tools: int) -> tuple[GatewayMetrics, HistoryFigures]:
    metrics = GatewayMetrics()
    for n in range(tools):
        recorder = metrics.for_tool(_tool(n))
        for _ in range(n % 5 + 1):
            recorder.record("success", "", 0.001 * (n % 50 + 1))
    totals = tuple(SubjectTotal(_tool(n), "tool", tools - n, n % 3, 0.01, 0.02) for n in range(tools))
    return metrics, HistoryFigures("hour", 60, None, (), (), totals)


def _render(metrics: GatewayMetrics, figures: HistoryFigures, query: str | None) -> str:
    history = history_charts(figures, query, 1)
    page = metrics_page(read_stats(metrics), None, history, query=query, page=1, keep={"window": "hour"})
    return str(page)


def _median_ms(rounds: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _row(size: int, rounds: int) -> tuple[str, ...]:
    metrics, figures = _filled(size)
    first = _median_ms(rounds, lambda: _render(metrics, figures, None))
    filtered = _median_ms(rounds, lambda: _render(metrics, figures, "op_0001"))
    stats_ms = _median_ms(rounds, lambda: read_stats(metrics))
    size_bytes = len(_render(metrics, figures, None).encode())
    return str(size), f"{first:.1f}", f"{filtered:.1f}", str(size_bytes), f"{stats_ms:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000", help="tool counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per figure (the median is shown)")
    args = parser.parse_args()
    table = Table(title="/ui/metrics render (read_stats + history + page), median ms")
    for column in ("tools", "first page ms", "filtered ms", "HTML bytes", "read_stats ms"):
        table.add_column(column, justify="right")
    for size in (int(part) for part in args.sizes.split(",")):
        table.add_row(*_row(size, args.rounds))
    Console().print(table)


if __name__ == "__main__":
    main()
