"""DNS-rebinding protection for the gateway's own GET/POST routes (REST and pages).

The check is the MCP SDK's `TransportSecurityMiddleware` with the settings the MCP endpoint uses
(`app.transport_security_for`), so every surface accepts and refuses the same Host and Origin
values. Each surface renders the refusal its own way (a JSON error, an HTML page).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request

__all__ = ["OriginCheck", "OriginRefusal"]

CODE = "A-AUTH-ORIGIN"


@dataclass(frozen=True, slots=True)
class OriginRefusal:
    """Which header was refused (`host` or `origin`), its value, and the HTTP status (421 or 403)."""

    header: str
    value: str
    http_status: int

    @property
    def message(self) -> str:
        return f"the {self.header.capitalize()} header {self.value!r} is not allowed for this gateway"


class OriginCheck:
    """`refusal(request)`: None when the request may be answered; no settings means no check."""

    def __init__(self, settings: TransportSecuritySettings | None) -> None:
        self._guard = TransportSecurityMiddleware(settings) if settings is not None else None

    async def refusal(self, request: Request) -> OriginRefusal | None:
        if self._guard is None:
            return None
        refused = await self._guard.validate_request(request, is_post=False)
        if refused is None:
            return None
        header = "host" if refused.status_code == 421 else "origin"
        return OriginRefusal(header, request.headers.get(header, ""), refused.status_code)
