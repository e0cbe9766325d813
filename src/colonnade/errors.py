"""`ColonnadeError`: the one base of every error Colonnade raises on purpose.

Each subclass names a stable `code` from the one error registry (`calls/call_errors.py`), so a
CLI, a log line or an HTTP answer can say the same thing about the same fault. The registry
lives with the call taxonomy; a test checks that every subclass's code is registered, so a
mistyped code fails the suite instead of becoming `S-TOOL-INTERNAL` at run time.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["ColonnadeError"]


class ColonnadeError(Exception):
    """An error a user can meet: `code` is stable, `fix` (when known) says what to do next."""

    code: ClassVar[str] = "S-TOOL-INTERNAL"
    fix: str | None = None
