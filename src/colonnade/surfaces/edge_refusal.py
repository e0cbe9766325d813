"""`EdgeRefusal`: why the HTTP edge answered a request itself, for each surface to render its own way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["EdgeRefusal"]


@dataclass(frozen=True, slots=True)
class EdgeRefusal:
    """Why the edge refused a request: a registry code, a message, the HTTP status, and details."""

    code: str
    message: str
    http_status: int
    details: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
