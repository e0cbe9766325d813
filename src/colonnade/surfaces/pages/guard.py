"""Refusals of page requests, as a page: the HTTP edge refused a foreign Host or Origin (421/403),
or a request without an acceptable credential (401/403).

The check itself is the edge's (`surfaces/edge.py`), the same for every route; pages only render
its answer for people, with the same status code and error code as REST and the MCP endpoint.
"""

from __future__ import annotations

from starlette.responses import Response
from starlette.types import Scope

from colonnade.surfaces.edge import EdgeRefusal
from colonnade.surfaces.pages.html import tag
from colonnade.surfaces.pages.layout import document, page_response

__all__ = ["render_refusal"]


def render_refusal(refusal: EdgeRefusal, scope: Scope) -> Response:
    page = document(
        "Refused",
        tag("h1", "Request refused"),
        tag("p", f"{refusal.message[0].upper()}{refusal.message[1:]} ({refusal.code})."),
        tag("p", _hint(refusal.code), class_="muted") if refusal.code.startswith("A-AUTH-") else None,
    )
    return page_response(page, refusal.http_status)


_ORIGIN = (
    "This gateway answers only pages opened under the names it serves (http://127.0.0.1, "
    "http://localhost or http://[::1] on loopback, and the configured public names)."
)
_CREDENTIAL = (
    "The pages need a credential like every route of this gateway: send an Authorization header "
    "(Bearer token or API key) with a scope that opens them (see docs/governance.md)."
)


def _hint(code: str) -> str:
    return _ORIGIN if code == "A-AUTH-ORIGIN" else _CREDENTIAL
