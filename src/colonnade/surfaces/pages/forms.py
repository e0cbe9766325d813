"""What every state-changing page form needs: its fields read, and its CSRF token checked.

A form changes state only within a logged-in page session and only when it carries that session's
token (a synchronizer token, compared in constant time). A page of another site can make a
browser send a form, but it cannot read the token; the edge refuses its Origin besides, and the
session cookie is `SameSite=Strict`.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response

from colonnade.governance.principal import PrincipalKind
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.html import tag
from colonnade.surfaces.pages.layout import CSRF_FIELD, LOGIN_PATH, Visitor, document, page_response
from colonnade.surfaces.pages.session_auth import session_of_scope

__all__ = ["csrf_refusal", "form_fields", "visitor_of"]

_FORM_TYPE = "application/x-www-form-urlencoded"


async def form_fields(request: Request) -> dict[str, str]:
    """The fields of an urlencoded form (the only kind the pages send); the first of a repeated name."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != _FORM_TYPE:
        return {}
    body = (await request.body()).decode("utf-8", errors="replace")
    fields: dict[str, str] = {}
    for name, value in parse_qsl(body, keep_blank_values=True):
        fields.setdefault(name, value)
    return fields


def visitor_of(request: Request) -> Visitor | None:
    """The header's visitor: None on a gateway without authentication (nobody logs in there)."""
    principal = principal_of_scope(request.scope)
    if principal.kind is PrincipalKind.ANONYMOUS:
        return None
    found = session_of_scope(request.scope)
    return Visitor(principal.key, found[1].csrf_token if found is not None else None)


def csrf_refusal(request: Request, fields: dict[str, str]) -> Response | None:
    """None when the form carries its session's token; else the 403 page (A-AUTH-CSRF)."""
    found = session_of_scope(request.scope)
    if found is not None and found[1].csrf_matches(fields.get(CSRF_FIELD)):
        return None
    reason = (
        "This form did not carry the token of your session: it may come from another site, or "
        "from a page opened before you logged in again"
        if found is not None
        else "Forms that change something need a logged-in page session"
    )
    page = document(
        "Refused",
        tag("h1", "Form refused"),
        tag("p", reason, " (A-AUTH-CSRF).", class_="error", id="error"),
        tag("p", "Reload the page and send the form again, or ", tag("a", "log in", href=LOGIN_PATH), "."),
        visitor=visitor_of(request),
    )
    return page_response(page, 403)
