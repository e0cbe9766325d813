"""Refusals of page requests, as a page: the HTTP edge refused a foreign Host or Origin (421/403),
or a request without an acceptable credential (401/403).

The check itself is the edge's (`surfaces/edge.py`), the same for every route; pages only render
its answer for people, with the same status code and error code as REST and the MCP endpoint. A
page request that needs a login (401) is sent to the login page instead, which returns the
visitor to the page they asked for.
"""

from __future__ import annotations

from starlette.responses import RedirectResponse, Response
from starlette.types import Scope

from colonnade.surfaces.edge import EdgeRefusal
from colonnade.surfaces.pages.html import tag
from colonnade.surfaces.pages.layout import document, page_response
from colonnade.surfaces.pages.login import login_url
from colonnade.surfaces.pages.session_auth import is_page_path
from colonnade.surfaces.pages.sessions import SESSION_COOKIE, SESSION_COOKIE_PATH

__all__ = ["render_refusal"]


def render_refusal(refusal: EdgeRefusal, scope: Scope) -> Response:
    if refusal.http_status == 401 and is_page_path(scope["path"]):
        return _to_login(refusal, scope)
    page = document(
        "Refused",
        tag("h1", "Request refused"),
        tag("p", f"{refusal.message[0].upper()}{refusal.message[1:]} ({refusal.code}).", id="error"),
        tag("p", _hint(refusal.code), class_="muted") if refusal.code.startswith("A-AUTH-") else None,
    )
    return page_response(page, refusal.http_status)


def _to_login(refusal: EdgeRefusal, scope: Scope) -> Response:
    query = scope.get("query_string", b"").decode("latin-1")
    asked = scope["path"] + (f"?{query}" if query else "") if scope.get("method") in ("GET", "HEAD") else None
    ended = refusal.code if refusal.details.get("session") == "ended" else None
    response = RedirectResponse(login_url(asked, ended=ended), status_code=303)
    if ended is not None:
        response.delete_cookie(SESSION_COOKIE, path=SESSION_COOKIE_PATH, httponly=True, samesite="strict")
    return response


_ORIGIN = (
    "This gateway answers only pages opened under the names it serves (http://127.0.0.1, "
    "http://localhost or http://[::1] on loopback, and the configured public names)."
)
_CREDENTIAL = (
    "The pages need a credential with a scope that opens them: log in with an API key or an "
    "access token that holds it, or ask an administrator for one (see docs/governance.md)."
)


def _hint(code: str) -> str:
    return _ORIGIN if code == "A-AUTH-ORIGIN" else _CREDENTIAL
