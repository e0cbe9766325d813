"""Why a core tool refused, as a registry code: raised by a tool, answered as the call's error."""

from __future__ import annotations

from typing import Any

from colonnade.errors import ColonnadeError

__all__ = ["PlatformRefusal"]


class PlatformRefusal(ColonnadeError):
    def __init__(self, code: str, message: str, **details: Any) -> None:
        self.refusal_code = code
        self.message = message
        self.details = details
        super().__init__(message)
