"""Headless Chromium for the pages' browser tests: Debian's /usr/bin/chromium driven by Playwright.

Never `playwright install`: the browser is the distribution's (`make browser` installs it with
apt-get on a fresh machine). Where it is missing and could not be installed, the tests skip and
say so; a browser that is there but fails to start is a failure, not a skip.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium", "png_pixels", "png_size"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> Iterator[Browser]:
    """One browser for a test module (a fixture body); skips when Chromium is not installed."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing and could not be installed (`make browser` installs Debian's "
            "chromium with apt-get when run as root): the browser tests are skipped"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) of a PNG screenshot, read from its IHDR chunk (no imaging library needed)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def png_pixels(png: bytes) -> list[tuple[int, int, int]]:
    """Every pixel of an 8-bit RGB or RGBA PNG (what Chromium's screenshots are) as (r, g, b).

    Decoded here (zlib and the five PNG row filters) so that a test can check what was drawn
    without an imaging library.
    """
    width, height = png_size(png)
    depth, colour_type, interlace = png[24], png[25], png[28]
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, "an 8-bit RGB(A) PNG expected"
    channels = 3 if colour_type == 2 else 4
    data, offset = bytearray(), 8
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind = png[offset + 4 : offset + 8]
        if kind == b"IDAT":
            data += png[offset + 8 : offset + 8 + length]
        offset += 12 + length
    raw = zlib.decompress(bytes(data))
    stride = width * channels
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        pixels.extend(tuple(line[i : i + 3]) for i in range(0, stride, channels))  # type: ignore[misc]
        previous = line
    return pixels


def _paeth(left: int, up: int, corner: int) -> int:
    guess = left + up - corner
    to_left, to_up, to_corner = abs(guess - left), abs(guess - up), abs(guess - corner)
    if to_left <= to_up and to_left <= to_corner:
        return left
    return up if to_up <= to_corner else corner
