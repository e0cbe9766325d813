"""Line charts as inline SVG, drawn on the server: no script, no library, nothing loaded.

The pages' Content-Security-Policy forbids scripts and every fetch, so a chart is markup like
the rest of the page, built with `tag` (every label escaped). Colours and fonts are
presentation attributes, not `style`, which the policy allows only by the page style's hash.
A value of None is a gap in the line (a bucket that measured nothing, such as the latency of a
minute without calls); the first series is also drawn as a filled area under its line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from colonnade.surfaces.pages.html import Html, tag

__all__ = ["PALETTE", "ChartSeries", "line_chart", "nice_ceiling"]

PALETTE = ("#2f5fb3", "#c2571a", "#2b8a3e", "#8a3ffc")
"""Line colours, in the order of the series (readable on white, distinct without colour vision)."""

_WIDTH, _HEIGHT = 640, 220
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 30, 44
_FONT = "system-ui, sans-serif"
_Y_TICKS = 4


@dataclass(frozen=True, slots=True)
class ChartSeries:
    """One line: its legend label and one value per point of the chart's time axis."""

    label: str
    values: Sequence[float | None]


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value` (the y axis' top)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if value <= step * power * (1 + 1e-9):
            return step * power
    return 10 * power


def line_chart(
    title: str,
    times: Sequence[datetime],
    series: Sequence[ChartSeries],
    *,
    y_label: str,
    format_value: Callable[[float], str],
    chart_id: str,
) -> Html:
    """An SVG chart of `series` over `times` (oldest first, UTC), with axes, tick labels and a legend."""
    for line in series:
        if len(line.values) != len(times):
            raise ValueError(f"series {line.label!r} has {len(line.values)} values for {len(times)} times")
    measured = [v for line in series for v in line.values if v is not None]
    top = nice_ceiling(max(measured, default=0.0))
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def x_of(index: int) -> float:
        return _LEFT + (plot_w * index / (len(times) - 1) if len(times) > 1 else plot_w / 2)

    def y_of(value: float) -> float:
        return _TOP + plot_h * (1 - min(value, top) / top)

    parts: list[Html] = [
        tag("title", title),
        tag("rect", x=0, y=0, width=_WIDTH, height=_HEIGHT, fill="#ffffff"),
        tag(
            "text", title, x=_LEFT, y=18, font_size=14, font_weight=600, fill="#1d2433", class_="chart-title"
        ),
        *_y_axis(top, y_of, format_value),
        *_x_axis(times, x_of),
        tag(
            "text",
            y_label,
            x=14,
            y=f"{_TOP + plot_h / 2:.1f}",
            font_size=11,
            fill="#4a5263",
            transform=f"rotate(-90 14 {_TOP + plot_h / 2:.1f})",
            text_anchor="middle",
            class_="axis-label y-label",
        ),
        tag(
            "text",
            "time (UTC)",
            x=f"{_LEFT + plot_w / 2:.1f}",
            y=_HEIGHT - 6,
            font_size=11,
            fill="#4a5263",
            text_anchor="middle",
            class_="axis-label x-label",
        ),
    ]
    for index, line in enumerate(series):
        colour = PALETTE[index % len(PALETTE)]
        runs = _runs(line.values)
        if index == 0:
            parts.extend(_area(run, x_of, y_of, _TOP + plot_h, colour) for run in runs)
        parts.extend(_line(run, x_of, y_of, colour, line.label) for run in runs)
        parts.extend(_dot(run, x_of, y_of, colour) for run in runs if len(run) == 1)
    parts.extend(_legend(series))
    return tag(
        "svg",
        *parts,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {_WIDTH} {_HEIGHT}",
        width=_WIDTH,
        height=_HEIGHT,
        role="img",
        aria_label=title,
        id=chart_id,
        class_="chart",
        data_points=len(times),
        data_measured=len(measured),
    )


_Run = list[tuple[int, float]]


def _runs(values: Sequence[float | None]) -> list[_Run]:
    """The stretches of consecutive measured values (a None ends one)."""
    runs: list[_Run] = []
    current: _Run = []
    for index, value in enumerate(values):
        if value is None:
            if current:
                runs.append(current)
            current = []
        else:
            current.append((index, value))
    if current:
        runs.append(current)
    return runs


def _path(run: _Run, x_of: Callable[[int], float], y_of: Callable[[float], float]) -> str:
    return " ".join(f"{'M' if n == 0 else 'L'}{x_of(i):.1f},{y_of(v):.1f}" for n, (i, v) in enumerate(run))


def _line(
    run: _Run, x_of: Callable[[int], float], y_of: Callable[[float], float], colour: str, label: str
) -> Html:
    return tag(
        "path",
        d=_path(run, x_of, y_of),
        fill="none",
        stroke=colour,
        stroke_width=2,
        stroke_linejoin="round",
        class_="line",
        data_series=label,
    )


def _area(
    run: _Run, x_of: Callable[[int], float], y_of: Callable[[float], float], floor: float, colour: str
) -> Html:
    first, last = x_of(run[0][0]), x_of(run[-1][0])
    outline = f"{_path(run, x_of, y_of)} L{last:.1f},{floor:.1f} L{first:.1f},{floor:.1f} Z"
    return tag("path", d=outline, fill=colour, fill_opacity="0.12", stroke="none", class_="area")


def _dot(run: _Run, x_of: Callable[[int], float], y_of: Callable[[float], float], colour: str) -> Html:
    index, value = run[0]
    return tag("circle", cx=f"{x_of(index):.1f}", cy=f"{y_of(value):.1f}", r=3, fill=colour, class_="dot")


def _y_axis(top: float, y_of: Callable[[float], float], format_value: Callable[[float], str]) -> list[Html]:
    parts = [
        tag("line", x1=_LEFT, y1=_TOP, x2=_LEFT, y2=f"{y_of(0):.1f}", stroke="#9aa3b5", class_="axis y-axis")
    ]
    for step in range(_Y_TICKS + 1):
        value = top * step / _Y_TICKS
        y = f"{y_of(value):.1f}"
        parts.append(tag("line", x1=_LEFT, y1=y, x2=_WIDTH - _RIGHT, y2=y, stroke="#e3e5ea"))
        parts.append(
            tag(
                "text",
                format_value(value),
                x=_LEFT - 6,
                y=y,
                font_size=10,
                fill="#4a5263",
                text_anchor="end",
                dominant_baseline="middle",
                class_="tick y-tick",
            )
        )
    return parts


def _x_axis(times: Sequence[datetime], x_of: Callable[[int], float]) -> list[Html]:
    floor = _HEIGHT - _BOTTOM
    parts = [
        tag("line", x1=_LEFT, y1=floor, x2=_WIDTH - _RIGHT, y2=floor, stroke="#9aa3b5", class_="axis x-axis")
    ]
    if not times:
        return parts
    marks = sorted({0, len(times) // 4, len(times) // 2, 3 * len(times) // 4, len(times) - 1})
    for index in marks:
        x = f"{x_of(index):.1f}"
        parts.append(tag("line", x1=x, y1=floor, x2=x, y2=floor + 4, stroke="#9aa3b5"))
        parts.append(
            tag(
                "text",
                times[index].strftime("%H:%M"),
                x=x,
                y=floor + 16,
                font_size=10,
                fill="#4a5263",
                text_anchor="middle",
                class_="tick x-tick",
            )
        )
    return parts


def _legend(series: Sequence[ChartSeries]) -> list[Html]:
    parts: list[Html] = []
    x = _WIDTH - _RIGHT
    for index, line in reversed(list(enumerate(series))):
        colour = PALETTE[index % len(PALETTE)]
        width = 18 + 7 * len(line.label)
        x -= width
        parts.append(tag("rect", x=f"{x:.0f}", y=9, width=10, height=10, fill=colour))
        parts.append(
            tag("text", line.label, x=f"{x + 14:.0f}", y=18, font_size=11, fill="#1d2433", class_="legend")
        )
        x -= 8
    return parts
