"""Refusals of page requests, as a page: the HTTP edge refused a foreign Host or Origin (421/403).

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
        tag(
            "p",
            "This gateway answers only pages opened under the names it serves (http://127.0.0.1, "
            "http://localhost or http://[::1] on loopback, and the configured public names).",
            class_="muted",
        ),
    )
    return page_response(page, refusal.http_status)
