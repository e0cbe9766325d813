"""The access page's routes: one GET, and a POST per change, each a call of a governance service.

The forms call `KeyAdmin`, `AgentAdmin` and `SubscriptionAdmin` exactly as REST's `/v1/keys`,
`/v1/agents` and `/v1/subscriptions` do (scopes, tenants, personas, audit); the page adds the CSRF
check and the rendering. A change redirects to the page (post, redirect, get); a new key's secret
waits in this process for that one page view of the person who made it, then is forgotten.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.agent_admin import AgentAdmin, AgentRequest, agent_view
from colonnade.governance.key_admin import IssuedKey, KeyAdmin, KeyRequest, key_view
from colonnade.governance.plain_data import plain_fields
from colonnade.governance.principal import Principal
from colonnade.governance.refusals import GovernanceRefusal, InvalidRequest
from colonnade.governance.subscriptions import SubscriptionAdmin
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.access_page import AccessListing, access_page
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import ACCESS_PATH, page_response

__all__ = ["AccessView"]

_KEPT_SECRETS = 64
_DONE = {
    "key-created": "Key created.",
    "key-rotated": "Key rotated: the old one keeps working for its overlap window.",
    "key-revoked": "Key revoked.",
    "agent-registered": "Agent registered.",
    "agent-revoked": "Agent revoked.",
    "subscription-requested": "Subscription requested.",
    "subscription-approved": "Subscription approved.",
    "subscription-rejected": "Subscription rejected.",
    "subscription-revoked": "Subscription ended.",
}
"""What the page says after a change (`?done=`): fixed text, never the query's own words."""


class AccessView:
    def __init__(
        self, keys: KeyAdmin | None, agents: AgentAdmin | None, subscriptions: SubscriptionAdmin | None
    ) -> None:
        self.keys = keys
        self.agents = agents
        self.subscriptions = subscriptions
        self._secrets: OrderedDict[str, str] = OrderedDict()
        """Who made a key -> its secret, until their next view of the page."""

    def routes(self) -> list[BaseRoute]:
        return [
            Route(ACCESS_PATH, self.page, methods=["GET"]),
            Route(ACCESS_PATH + "/keys", self.create_key, methods=["POST"]),
            Route(ACCESS_PATH + "/keys/{id}/{action:str}", self.change_key, methods=["POST"]),
            Route(ACCESS_PATH + "/agents", self.register_agent, methods=["POST"]),
            Route(ACCESS_PATH + "/agents/{id}/revoke", self.revoke_agent, methods=["POST"]),
            Route(ACCESS_PATH + "/subscriptions", self.request_subscription, methods=["POST"]),
            Route(
                ACCESS_PATH + "/subscriptions/{id}/{action:str}", self.change_subscription, methods=["POST"]
            ),
        ]

    async def page(self, request: Request) -> Response:
        actor = principal_of_scope(request.scope)
        said = _DONE.get(request.query_params.get("done", ""))
        notice = tag("p", said, class_="note", id="notice") if said else None
        return page_response(await self._page(request, actor, notice))

    async def _page(self, request: Request, actor: Principal, notice: Html | None, status: int = 200) -> Html:
        listing = AccessListing()
        if self.keys is not None:
            listing.keys = await _seen(listing, "keys", self.keys.list(actor), key_view)
        if self.agents is not None:
            listing.agents = await _seen(listing, "agents", self.agents.list(actor), agent_view)
        if self.subscriptions is not None:
            listing.subscriptions = await _seen(
                listing, "subscriptions", self.subscriptions.list(actor), plain_fields
            )
        secret = self._secrets.pop(actor.key, None) if status == 200 else None
        return access_page(listing, visitor=visitor_of(request), notice=notice, secret=secret)

    # -- changes ---------------------------------------------------------------------------------

    async def create_key(self, request: Request) -> Response:
        async def create(actor: Principal, fields: dict[str, str]) -> str:
            assert self.keys is not None
            days = fields.get("expires_in_days", "").strip()
            asked = KeyRequest(
                owner=fields.get("owner", "").strip(),
                persona=fields.get("persona", "").strip(),
                label=fields.get("label", "").strip() or None,
                expires_in_s=_days(days),
            )
            self._keep(actor, await self.keys.create(actor, asked))
            return "key-created"

        return await self._change(request, self.keys, create)

    async def change_key(self, request: Request) -> Response:
        key_id, action = request.path_params["id"], request.path_params["action"]

        async def change(actor: Principal, fields: dict[str, str]) -> str:
            assert self.keys is not None
            if action == "rotate":
                self._keep(actor, await self.keys.rotate(actor, key_id))
                return "key-rotated"
            await self.keys.revoke(actor, key_id)
            return "key-revoked"

        if action not in ("rotate", "revoke"):
            return await self._refusal(request, 404, f"No such action on a key: {action[:40]!r}.")
        return await self._change(request, self.keys, change)

    async def register_agent(self, request: Request) -> Response:
        async def register(actor: Principal, fields: dict[str, str]) -> str:
            assert self.agents is not None
            tools = tuple(
                p.strip() for p in fields.get("allowed_tools", "").replace("\n", ",").split(",") if p.strip()
            )
            asked = AgentRequest(
                allowed_tools=tools,
                agent_id=fields.get("agent_id", "").strip() or None,
                owner=fields.get("owner", "").strip() or None,
                via="pages",
            )
            await self.agents.register(actor, asked)
            return "agent-registered"

        return await self._change(request, self.agents, register)

    async def revoke_agent(self, request: Request) -> Response:
        async def revoke(actor: Principal, fields: dict[str, str]) -> str:
            assert self.agents is not None
            await self.agents.revoke(actor, request.path_params["id"])
            return "agent-revoked"

        return await self._change(request, self.agents, revoke)

    async def request_subscription(self, request: Request) -> Response:
        async def ask(actor: Principal, fields: dict[str, str]) -> str:
            assert self.subscriptions is not None
            await self.subscriptions.request(actor, fields.get("api", "").strip())
            return "subscription-requested"

        return await self._change(request, self.subscriptions, ask)

    async def change_subscription(self, request: Request) -> Response:
        which, action = request.path_params["id"], request.path_params["action"]
        moves = {"approve": "approved", "reject": "rejected", "revoke": "revoked"}

        async def move(actor: Principal, fields: dict[str, str]) -> str:
            assert self.subscriptions is not None
            await getattr(self.subscriptions, action)(actor, which)
            return f"subscription-{moves[action]}"

        if action not in moves:
            return await self._refusal(request, 404, f"No such action on a subscription: {action[:40]!r}.")
        return await self._change(request, self.subscriptions, move)

    async def _change(
        self,
        request: Request,
        service: object | None,
        work: Callable[[Principal, dict[str, str]], Awaitable[str]],
    ) -> Response:
        fields = await form_fields(request)
        refused_form = csrf_refusal(request, fields)
        if refused_form is not None:
            return refused_form
        if service is None:
            return await self._refusal(
                request, 404, "This gateway keeps no such records (no database configured)."
            )
        try:
            done = await work(principal_of_scope(request.scope), fields)
        except GovernanceRefusal as refused:
            return await self._refusal(request, refused.http_status, f"{refused.message} ({refused.code}).")
        return RedirectResponse(f"{ACCESS_PATH}?done={done}", status_code=303)

    def _keep(self, actor: Principal, issued: IssuedKey) -> None:
        self._secrets[actor.key] = issued.token
        while len(self._secrets) > _KEPT_SECRETS:
            self._secrets.popitem(last=False)

    async def _refusal(self, request: Request, status: int, message: str) -> Response:
        notice = tag("p", message, class_="error", id="error")
        return page_response(
            await self._page(request, principal_of_scope(request.scope), notice, status), status
        )


async def _seen(
    listing: AccessListing, kind: str, work: Awaitable[list[Any]], view: Callable[[Any], dict[str, Any]]
) -> list[dict[str, Any]] | None:
    try:
        return [view(record) for record in await work]
    except GovernanceRefusal as refused:
        listing.refused[kind] = f"{refused.message} ({refused.code})."
        return None


def _days(text: str) -> int | None:
    """The form's lifetime in days, as seconds (empty: the key does not expire)."""
    if not text:
        return None
    try:
        days = float(text)
    except ValueError:
        days = 0.0
    if not 0 < days <= 3650:
        raise InvalidRequest(f"expires in days is a number above 0 and at most 3650, not {text[:20]!r}")
    return int(days * 86_400)
