"""The tool admissions page's routes: the list of parked definitions, and the approve form.

Approving goes through the runtime's `Servers.admit`, the same path as REST's
`POST /v1/servers/{name}/tools/{tool}/admit` and `colonnade servers admit` (four-eyes, audit with
both digests); the page adds the administrator check REST makes, the CSRF check and the
rendering. After a form the browser is sent back to the list (post, redirect, get).
"""

from __future__ import annotations

from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.catalog.tool_pins import AdmissionRefused
from colonnade.governance.operators import may_administer
from colonnade.governance.principal import Principal
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.admissions_page import ADMISSIONS_PATH, admissions_page
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import page_response

__all__ = ["AdmissionsView", "ServerAdmissions"]

_DONE = {
    "counted": "Approval counted: one more person must approve before the tool is served.",
    "admitted": "Admitted: the tool is served with this definition now.",
}
"""What the list says after a form (`?done=`): fixed text, never the query's own words."""


class ServerAdmissions(Protocol):
    """What the page needs from the gateway's servers (the runtime's `Servers`)."""

    def status(self) -> list[dict[str, Any]]: ...

    def admission_of(self, name: str) -> dict[str, Any]: ...

    async def admit(self, name: str, tool: str, approver: str, principal: Principal | None = None) -> Any: ...


class AdmissionsView:
    def __init__(self, servers: ServerAdmissions, *, admin_api: bool, approvals_needed: int) -> None:
        self.servers = servers
        self.admin_api = admin_api
        self.approvals_needed = approvals_needed

    def routes(self) -> list[BaseRoute]:
        return [
            Route(ADMISSIONS_PATH, self.page, methods=["GET"]),
            Route(ADMISSIONS_PATH + "/{server}/{tool}/admit", self.admit, methods=["POST"]),
        ]

    def waiting(self) -> int:
        """How many definitions wait, for the approvals page's pointer here."""
        return sum(len(report["parked"]) for report in self._reports())

    async def page(self, request: Request) -> Response:
        said = _DONE.get(request.query_params.get("done", ""))
        notice = tag("p", said, class_="note", id="notice") if said else None
        return page_response(self._page(request, notice))

    async def admit(self, request: Request) -> Response:
        fields = await form_fields(request)
        refused_form = csrf_refusal(request, fields)
        if refused_form is not None:
            return refused_form
        principal = principal_of_scope(request.scope)
        if not may_administer(principal, self.admin_api):
            why = "Admitting tools needs an administrator, and server.admin_api on (A-AUTH-ADMIN)."
            return self._refusal(request, 403, why)
        server, tool = request.path_params["server"], request.path_params["tool"]
        try:
            outcome = await self.servers.admit(server, tool, principal.key, principal)
        except KeyError:
            return self._refusal(request, 404, f"No server named {server!r} (I-REQ-UNKNOWN-SERVER).")
        except AdmissionRefused as refused:
            return self._refusal(request, refused.http_status, f"{refused.message} ({refused.code}).")
        done = "admitted" if outcome.admitted else "counted"
        return RedirectResponse(f"{ADMISSIONS_PATH}?done={done}", status_code=303)

    def _reports(self) -> list[dict[str, Any]]:
        reports = []
        for status in self.servers.status():
            try:
                reports.append(self.servers.admission_of(str(status["name"])))
            except KeyError:  # removed between the two reads
                continue
        return reports

    def _page(self, request: Request, notice: Html | None = None) -> Html:
        visitor = visitor_of(request)
        may_admit = (
            visitor is not None
            and visitor.csrf_token is not None
            and may_administer(principal_of_scope(request.scope), self.admin_api)
        )
        return admissions_page(
            self._reports(),
            approvals_needed=self.approvals_needed,
            may_admit=may_admit,
            visitor=visitor,
            notice=notice,
        )

    def _refusal(self, request: Request, status: int, message: str) -> Response:
        return page_response(self._page(request, tag("p", message, class_="error", id="error")), status)
