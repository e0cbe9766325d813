"""The Connected accounts page's routes: the list, Connect, Disconnect, and the provider's callback.

Connect (a session form, CSRF-checked) starts the authorization code flow with PKCE: the grants
service returns the provider's URL and a sealed binding, which goes in a cookie for the callback
path alone (`HttpOnly`, `SameSite=Lax` so that the provider's top-level redirect back carries it,
ten minutes). The callback checks the provider's `state` against that binding, which another site
can neither read nor set, so it cannot complete a flow in a visitor's name. The page's
`form-action` also names the providers' origins, which the Connect form's redirect goes to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.connections_page import (
    CONNECTIONS_PATH,
    Account,
    connection_result_page,
    connections_page,
)
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Child, tag
from colonnade.surfaces.pages.layout import SECURITY_HEADERS, page_response

__all__ = ["CALLBACK_PATH", "CONNECT_COOKIE", "ConnectionsView", "UpstreamAccountsControl"]

CALLBACK_PATH = CONNECTIONS_PATH + "/callback"
CONNECT_COOKIE = "colonnade_connect"
_CONNECT_COOKIE_S = 600
_DONE = {"disconnected": "Account disconnected: the gateway's grant is revoked and deleted."}


class UpstreamAccountsControl(Protocol):
    """What the page needs of the per-user grants (the runtime's `UpstreamAccounts`)."""

    def provider_origins(self) -> list[str]: ...

    async def connections(self, principal: Principal) -> Sequence[Account]: ...

    def begin(self, principal: Principal, provider: str) -> tuple[str, str] | str:
        """(the provider's authorization URL, the sealed binding), or why not."""
        ...

    async def complete(
        self, binding: str | None, state: str | None, code: str | None, principal: Principal | None
    ) -> Account | str:
        """The account connected, or why not."""
        ...

    async def disconnect(self, principal: Principal, provider: str) -> int: ...


class ConnectionsView:
    def __init__(self, accounts: UpstreamAccountsControl) -> None:
        self.accounts = accounts

    def routes(self) -> list[BaseRoute]:
        return [
            Route(CONNECTIONS_PATH, self.page, methods=["GET"]),
            Route(CALLBACK_PATH, self.callback, methods=["GET"]),
            Route(CONNECTIONS_PATH + "/{provider}/{action:str}", self.change, methods=["POST"]),
        ]

    async def page(self, request: Request) -> Response:
        said = _DONE.get(request.query_params.get("done", ""))
        return await self._page(request, tag("p", said, class_="note", id="notice") if said else None)

    async def change(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused = csrf_refusal(request, fields)
        if refused is not None:
            return refused
        principal = principal_of_scope(request.scope)
        provider, action = request.path_params["provider"], request.path_params["action"]
        known = {account.provider for account in await self.accounts.connections(principal)}
        if action not in ("connect", "disconnect") or provider not in known:
            message = f"No upstream account {provider[:64]!r} to {action[:20]} (I-REQ-UNKNOWN-PROVIDER)."
            return await self._page(request, tag("p", message, class_="error", id="error"), 404)
        if action == "disconnect":
            await self.accounts.disconnect(principal, provider)
            return RedirectResponse(f"{CONNECTIONS_PATH}?done=disconnected", status_code=303)
        started = self.accounts.begin(principal, provider)
        if isinstance(started, str):
            return await self._page(request, tag("p", started, class_="error", id="error"), 400)
        url, binding = started
        answer = RedirectResponse(url, status_code=303)
        answer.set_cookie(
            CONNECT_COOKIE,
            binding,
            max_age=_CONNECT_COOKIE_S,
            path=CALLBACK_PATH,
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="lax",
        )
        return answer

    async def callback(self, request: Request) -> Response:
        params = request.query_params
        principal = principal_of_scope(request.scope)
        visitor = visitor_of(request)
        error = params.get("error")
        if error is not None:
            outcome: Account | str = f"The provider did not grant access: {error[:80]}."
        else:
            caller = principal if principal.kind is PrincipalKind.USER else None
            binding = request.cookies.get(CONNECT_COOKIE)
            outcome = await self.accounts.complete(binding, params.get("state"), params.get("code"), caller)
        if isinstance(outcome, str):
            page = connection_result_page(outcome, ok=False, visitor=visitor)
            answer = page_response(page, 400)
        else:
            said = f"Your {outcome.display_name} account is connected"
            said += f" (as {outcome.subject})." if outcome.subject else "."
            answer = page_response(connection_result_page(said, ok=True, visitor=visitor))
        answer.delete_cookie(CONNECT_COOKIE, path=CALLBACK_PATH, httponly=True, samesite="lax")
        return answer

    async def _page(self, request: Request, notice: Child = None, status: int = 200) -> Response:
        principal = principal_of_scope(request.scope)
        accounts = await self.accounts.connections(principal)
        page = connections_page(accounts, visitor=visitor_of(request), notice=notice)
        answer = page_response(page, status)
        origins = " ".join(self.accounts.provider_origins())
        if origins:
            policy = SECURITY_HEADERS["Content-Security-Policy"]
            answer.headers["Content-Security-Policy"] = policy.replace(
                "form-action 'self'", f"form-action 'self' {origins}"
            )
        return answer
