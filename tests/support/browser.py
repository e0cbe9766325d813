"""Headless Chromium for the pages' browser tests: Debian's /usr/bin/chromium driven by Playwright.

Never `playwright install`: the browser is the distribution's (`make browser` installs it with
apt-get on a fresh machine). Where it is missing and could not be installed, the tests skip and
say so; a browser that is there but fails to start is a failure, not a skip.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "chromium", "png_size"]

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
