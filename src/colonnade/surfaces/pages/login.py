"""`/ui/login` and `/ui/logout`: a person pastes an API key or a token once, the browser keeps a cookie.

The pasted credential is checked by the edge's own authenticator (the one every request meets,
audit of refusals included), as a request to the login page: it must open the pages
(`colonnade:catalog:read`). On success the gateway opens a page session and sets its cookie:
`HttpOnly`, `SameSite=Strict`, `Path=/ui` (REST and MCP never receive it), `Secure` when served
over https, and as long-lived as `auth.page_session_s`. The login form carries its own token,
paired with a short-lived cookie (double submit), so another site cannot log a visitor in under
its own key.
"""

from __future__ import annotations

import hmac
import re
import secrets
from urllib.parse import urlencode

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.call_errors import REGISTRY
from colonnade.governance.principal import Principal
from colonnade.surfaces.edge import Authenticator, EdgeRefusal
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields
from colonnade.surfaces.pages.html import Child, Html, tag
from colonnade.surfaces.pages.layout import CATALOG_PATH, LOGIN_PATH, LOGOUT_PATH, document, page_response
from colonnade.surfaces.pages.session_auth import session_cookie, session_of_scope
from colonnade.surfaces.pages.sessions import SESSION_COOKIE, SESSION_COOKIE_PATH, PageSessions

__all__ = ["LOGIN_COOKIE", "Login", "login_url", "safe_next"]

LOGIN_COOKIE = "colonnade_login"
_LOGIN_FORM_S = 900
_CREDENTIAL = re.compile(r"^[\x21-\x7e]{1,8192}$")
_CODE = re.compile(r"^A-AUTH-[A-Z-]{2,40}$")
# Their fix hints speak of request headers, which a person pasting into a form never sees.
_HEADER_HINTS = frozenset({"A-AUTH-MISSING", "A-AUTH-MALFORMED"})


def safe_next(value: str | None) -> str:
    """Where to go after login: a page under `/ui/` (where the cookie is sent), never another site."""
    if not value or not value.startswith(SESSION_COOKIE_PATH + "/") or "\\" in value:
        return CATALOG_PATH
    path = value.split("?", 1)[0]
    return value if path not in (LOGIN_PATH, LOGOUT_PATH) else CATALOG_PATH


def login_url(next_path: str | None = None, *, ended: str | None = None) -> str:
    params = {key: value for key, value in (("next", next_path), ("ended", ended)) if value}
    return f"{LOGIN_PATH}?{urlencode(params)}" if params else LOGIN_PATH


class Login:
    """The login and logout routes over the edge's authenticator and the page sessions."""

    def __init__(self, authenticate: Authenticator, sessions: PageSessions) -> None:
        self.authenticate = authenticate
        self.sessions = sessions

    def routes(self) -> list[BaseRoute]:
        return [
            Route(LOGIN_PATH, self.form, methods=["GET"]),
            Route(LOGIN_PATH, self.log_in, methods=["POST"]),
            Route(LOGOUT_PATH, self.log_out, methods=["POST"]),
        ]

    async def form(self, request: Request) -> Response:
        params = request.query_params
        notice: Child = None
        if params.get("out"):
            notice = tag("p", "You are logged out.", class_="note", id="notice")
        ended = params.get("ended", "")
        if _CODE.match(ended):
            notice = tag(
                "p",
                f"Your session ended: its credential is no longer accepted ({ended}). Log in again.",
                class_="note",
                id="notice",
            )
        return self._page(request, safe_next(params.get("next")), notice, 200)

    async def log_in(self, request: Request) -> Response:
        fields = await form_fields(request)
        target = safe_next(fields.get("next"))
        sent, expected = fields.get("login_token", ""), request.cookies.get(LOGIN_COOKIE, "")
        if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
            problem = (
                "The login form expired or came from another page (A-AUTH-CSRF): "
                "it is shown again, send it once more."
            )
            return self._page(request, target, _error(problem), 403)
        credential = _pasted(fields.get("credential", ""))
        if not credential:
            problem = "Paste an API key (col_...) or an access token (a JWT) into the field."
            return self._page(request, target, _error(problem), 400)
        if not _CREDENTIAL.match(credential):
            problem = (
                "That is not a credential: an API key or a token is one line of printable "
                "characters without spaces (A-AUTH-MALFORMED)."
            )
            return self._page(request, target, _error(problem), 400)
        outcome = await self._check(request, credential)
        if isinstance(outcome, EdgeRefusal):
            return self._page(request, target, _refused(outcome), outcome.http_status)
        await self.sessions.close(session_cookie(request.headers))  # a new login never keeps the old id
        cookie, _ = await self.sessions.open(credential, outcome.key)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            cookie,
            max_age=int(self.sessions.lifetime_s),
            path=SESSION_COOKIE_PATH,
            secure=_over_tls(request),
            httponly=True,
            samesite="strict",
        )
        response.delete_cookie(LOGIN_COOKIE, path=LOGIN_PATH)
        return response

    async def log_out(self, request: Request) -> Response:
        fields = await form_fields(request)
        if session_of_scope(request.scope) is None:
            return RedirectResponse(LOGIN_PATH, status_code=303)
        refused = csrf_refusal(request, fields)
        if refused is not None:
            return refused
        await self.sessions.close(session_cookie(request.headers))
        response = RedirectResponse(f"{LOGIN_PATH}?out=1", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=SESSION_COOKIE_PATH, httponly=True, samesite="strict")
        return response

    async def _check(self, request: Request, credential: str) -> Principal | EdgeRefusal:
        """The edge's verdict on the credential, as if it came with this request in its header."""
        raw = [(k, v) for k, v in request.headers.raw if k in (b"host", b"origin", b"user-agent")]
        raw.append((b"authorization", f"Bearer {credential}".encode("ascii")))
        return await self.authenticate(Headers(raw=raw), request.scope)

    def _page(self, request: Request, target: str, notice: Child, status: int) -> Response:
        token = secrets.token_urlsafe(24)
        form = tag(
            "form",
            tag("label", "API key or access token", for_="credential"),
            tag(
                "input",
                type="password",
                name="credential",
                id="credential",
                autocomplete="off",
                required=True,
                autofocus=True,
                placeholder="col_... or eyJ...",
            ),
            tag("input", type="hidden", name="login_token", value=token),
            tag("input", type="hidden", name="next", value=target),
            tag("button", "Log in", type="submit", id="login"),
            method="post",
            action=LOGIN_PATH,
            class_="login",
        )
        hint = tag(
            "p",
            "Paste a credential this gateway accepts: an API key (colonnade keys create) or an "
            "OAuth access token (for the demo, the token in .colonnade/demo-token). It needs the "
            "scope colonnade:catalog:read. The browser then keeps a session cookie for "
            f"{int(self.sessions.lifetime_s) // 60} minutes; the credential stays on the gateway.",
            class_="muted",
        )
        page = document("Log in", tag("h1", "Log in"), notice, form, hint)
        response = page_response(page, status)
        response.set_cookie(
            LOGIN_COOKIE,
            token,
            max_age=_LOGIN_FORM_S,
            path=LOGIN_PATH,
            secure=_over_tls(request),
            httponly=True,
            samesite="strict",
        )
        return response


def _pasted(value: str) -> str:
    """The credential as pasted, without surrounding blanks or a leading `Bearer ` people copy along."""
    value = value.strip()
    scheme, _, rest = value.partition(" ")
    return rest.strip() if scheme.lower() == "bearer" and rest else value


def _error(message: str) -> Html:
    return tag("p", message, class_="error", id="error")


def _refused(refusal: EdgeRefusal) -> Html:
    spec = REGISTRY.get(refusal.code)
    fix = f" {spec.fix}" if spec is not None and refusal.code not in _HEADER_HINTS else ""
    return _error(f"That credential was refused: {refusal.message} ({refusal.code}).{fix}")


def _over_tls(request: Request) -> bool:
    return request.url.scheme == "https"
