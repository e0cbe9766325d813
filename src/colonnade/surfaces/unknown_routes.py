"""What the HTTP edge answers for a path no route serves, or a method a route does not take.

Starlette's own answer is plain text; a client of the REST API reads the typed error envelope
(`I-REQ-UNKNOWN-ROUTE` 404, `I-REQ-METHOD` 405 with the Allow header), a browser under `/ui` a page.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from colonnade.surfaces.pages.html import tag
from colonnade.surfaces.pages.layout import CATALOG_PATH, document, page_response
from colonnade.surfaces.rest.render import error_response

__all__ = ["UNKNOWN_ROUTE_HANDLERS"]

_PAGES = "/ui"


def _is_page(path: str) -> bool:
    return path == _PAGES or path.startswith(_PAGES + "/")


async def _not_found(request: Request, exc: Exception) -> Response:
    path = request.url.path
    if _is_page(path):
        page = document(
            "Page not found",
            tag("h1", "Page not found"),
            tag("p", "No page of this gateway has the address ", tag("code", path), "."),
            tag("p", tag("a", "Back to the catalog", href=CATALOG_PATH)),
        )
        return page_response(page, 404)
    return error_response("I-REQ-UNKNOWN-ROUTE", f"no route serves {request.method} {path}", 404, path=path)


async def _method_not_allowed(request: Request, exc: Exception) -> Response:
    headers = exc.headers if isinstance(exc, HTTPException) and exc.headers else {}
    allow = headers.get("Allow") or headers.get("allow") or ""
    allowed = [method.strip() for method in allow.split(",") if method.strip()]
    path = request.url.path
    response = error_response(
        "I-REQ-METHOD",
        f"{request.method} is not allowed on {path}; use {' or '.join(allowed) or 'another method'}",
        405,
        path=path,
        allowed=allowed,
    )
    if allow:
        response.headers["allow"] = allow
    return response


UNKNOWN_ROUTE_HANDLERS = {404: _not_found, 405: _method_not_allowed}
"""Starlette exception handlers by status: the app's answers when routing finds nothing."""
