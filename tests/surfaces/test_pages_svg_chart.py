"""The server-drawn SVG chart: axes, labels, gaps where nothing was measured, escaped text."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from colonnade.surfaces.pages.svg_chart import ChartSeries, line_chart, nice_ceiling

START = datetime(2026, 12, 3, 14, 0, tzinfo=UTC)
TIMES = [START + timedelta(minutes=n) for n in range(6)]


def chart(*series: ChartSeries, title: str = "Calls") -> str:
    return line_chart(title, TIMES, list(series), y_label="calls/s", format_value=str, chart_id="c")


def test_the_axes_carry_their_labels_and_the_times_of_the_window() -> None:
    svg = chart(ChartSeries("calls", [0, 1, 2, 3, 2, 1]))
    assert 'class="axis-label x-label"' in svg and ">time (UTC)<" in svg and ">calls/s<" in svg
    assert ">14:00<" in svg and ">14:05<" in svg  # first and last bucket under the x axis
    assert re.search(r'class="tick y-tick">5\.0<', svg)  # the top of the y axis: 3 rounded up to 5
    (path,) = re.findall(r'<path d="([^"]+)" fill="none"', svg)
    assert path.startswith("M") and path.count("L") == 5


def test_a_value_that_was_not_measured_is_a_gap_and_a_lone_value_a_dot() -> None:
    svg = chart(ChartSeries("p95", [1.0, 2.0, None, 4.0, None, None]))
    lines = re.findall(r'<path d="([^"]+)" fill="none"', svg)
    assert [line.count("L") for line in lines] == [1, 0]  # two points joined, then one alone
    assert svg.count('class="dot"') == 1


def test_text_is_escaped_and_a_series_of_the_wrong_length_is_refused() -> None:
    svg = chart(ChartSeries("<b>", [1] * 6), title="a & <script>")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&lt;b&gt;" in svg
    with pytest.raises(ValueError, match="has 2 values for 6 times"):
        chart(ChartSeries("short", [1, 2]))


@pytest.mark.parametrize(
    ("value", "top"), [(0, 1.0), (0.03, 0.05), (1, 1.0), (1.2, 2.0), (2.2, 2.5), (7, 10.0), (180, 200.0)]
)
def test_the_y_axis_ends_at_a_round_number(value: float, top: float) -> None:
    assert nice_ceiling(value) == pytest.approx(top)
