"""`ColonnadeError`: the one base of every error Colonnade raises on purpose.

Each subclass names a stable `code` from the one error registry (`calls/call_errors.py`), so a
CLI, a log line or an HTTP answer can say the same thing about the same fault. The registry
lives with the call taxonomy; a test checks that every subclass's code is registered, so a
mistyped code fails the suite instead of becoming `S-TOOL-INTERNAL` at run time.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["ColonnadeError", "not_utf8_position"]


class ColonnadeError(Exception):
    """An error a user can meet: `code` is stable, `fix` (when known) says what to do next."""

    code: ClassVar[str] = "S-TOOL-INTERNAL"
    fix: str | None = None


def not_utf8_position(exc: UnicodeDecodeError) -> tuple[int, int, str]:
    """Line, column (1-based) and hex of the first byte that is not UTF-8, so a user can find it."""
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return line, column, raw[exc.start : exc.start + 1].hex() or "?"
