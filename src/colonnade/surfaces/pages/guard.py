"""DNS-rebinding protection for pages: the Host/Origin check of REST and the MCP endpoint
(`surfaces/origin_check.py`), with the refusal rendered as a page and the same status codes
(421 foreign Host, 403 foreign Origin).
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response

from colonnade.surfaces.origin_check import CODE, OriginCheck
from colonnade.surfaces.pages.html import tag
from colonnade.surfaces.pages.layout import document, page_response

__all__ = ["HostGuard"]


class HostGuard:
    """`refusal(request)` is None when the request may be answered, else the page that refuses it."""

    def __init__(self, settings: TransportSecuritySettings | None) -> None:
        self._check = OriginCheck(settings)

    async def refusal(self, request: Request) -> Response | None:
        refused = await self._check.refusal(request)
        if refused is None:
            return None
        page = document(
            "Refused",
            tag("h1", "Request refused"),
            tag("p", f"{refused.message[0].upper()}{refused.message[1:]} ({CODE})."),
            tag(
                "p",
                "This gateway listens on loopback and answers only pages opened as http://127.0.0.1, "
                "http://localhost or http://[::1]; behind a real hostname, put it behind a proxy.",
                class_="muted",
            ),
        )
        return page_response(page, refused.http_status)
