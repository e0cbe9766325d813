"""The servers page's routes: the table, and the add, restart and remove forms.

The forms call the runtime's `Servers` exactly as REST's `/v1/servers` routes do, after the same
checks (`surfaces/new_server.py`, `may_administer`); the page adds the CSRF check and the
rendering, and redirects after a change (post, redirect, get).
"""

from __future__ import annotations

import shlex
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.config import McpServerSettings
from colonnade.governance.operators import may_administer
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.new_server import ServerRefused, checked_server
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import SERVERS_PATH, page_response
from colonnade.surfaces.pages.servers_page import servers_page

__all__ = ["ServersView"]

_DONE = {"added": "Server added.", "restarting": "Restarting the server.", "removed": "Server removed."}


class ServerControl(Protocol):
    """What the page needs from the gateway's servers (the runtime's `Servers`)."""

    def status(self) -> list[dict[str, Any]]: ...

    def unstartable(self, settings: McpServerSettings) -> str | None: ...

    async def add(self, settings: McpServerSettings) -> None: ...

    async def remove(self, name: str) -> None: ...

    async def restart(self, name: str) -> None: ...


class ServersView:
    def __init__(self, servers: ServerControl, *, admin_api: bool) -> None:
        self.servers = servers
        self.admin_api = admin_api

    def routes(self) -> list[BaseRoute]:
        return [
            Route(SERVERS_PATH, self.page, methods=["GET"]),
            Route(SERVERS_PATH, self.add, methods=["POST"]),
            Route(SERVERS_PATH + "/{name}/{action:str}", self.change, methods=["POST"]),
        ]

    async def page(self, request: Request) -> Response:
        said = _DONE.get(request.query_params.get("done", ""))
        return self._page(request, tag("p", said, class_="note", id="notice") if said else None)

    async def add(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused = csrf_refusal(request, fields) or self._not_admin(request)
        if refused is not None:
            return refused
        definition: dict[str, Any] = {
            "name": fields.get("name", "").strip(),
            "transport": fields.get("transport"),
        }
        for key in ("url", "command", "tenant"):
            if fields.get(key, "").strip():
                definition[key] = fields[key].strip()
        if fields.get("args", "").strip():
            definition["args"] = shlex.split(fields["args"])
        settings = checked_server(self.servers, definition)
        if isinstance(settings, ServerRefused):
            message = f"{settings.message} ({settings.code})."
            return self._page(request, tag("p", message, class_="error", id="error"), settings.http_status)
        await self.servers.add(settings)
        return RedirectResponse(f"{SERVERS_PATH}?done=added", status_code=303)

    async def change(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused = csrf_refusal(request, fields) or self._not_admin(request)
        if refused is not None:
            return refused
        name, action = request.path_params["name"], request.path_params["action"]
        if action not in ("restart", "remove") or not any(s["name"] == name for s in self.servers.status()):
            message = f"No server named {name!r} to {action[:20]} (I-REQ-UNKNOWN-SERVER)."
            return self._page(request, tag("p", message, class_="error", id="error"), 404)
        if action == "restart":
            await self.servers.restart(name)
            return RedirectResponse(f"{SERVERS_PATH}?done=restarting", status_code=303)
        await self.servers.remove(name)
        return RedirectResponse(f"{SERVERS_PATH}?done=removed", status_code=303)

    def _not_admin(self, request: Request) -> Response | None:
        if may_administer(principal_of_scope(request.scope), self.admin_api):
            return None
        why = "server.admin_api is off" if not self.admin_api else "an administrator may change servers"
        message = f"Changing downstream servers is not allowed: {why} (A-AUTH-ADMIN)."
        return self._page(request, tag("p", message, class_="error", id="error"), 403)

    def _page(self, request: Request, notice: Html | None = None, status: int = 200) -> Response:
        may_change = may_administer(principal_of_scope(request.scope), self.admin_api)
        page = servers_page(
            self.servers.status(), visitor=visitor_of(request), may_change=may_change, notice=notice
        )
        return page_response(page, status)
