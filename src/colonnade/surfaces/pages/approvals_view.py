"""The approvals pages' routes: the queue, one approval, and the approve and deny forms.

Decisions go through the approval desk and the coordinator that REST's
`POST /v1/approvals/{id}/approve|deny` call (four-eyes, approver personas, tenant, audit, the
signed token); the pages add only the CSRF check and the rendering. A refusal is shown with its
registry code and the HTTP status REST gives it. A decision redirects to the approval's own page
(post, redirect, get: a reload never posts again), which shows what was done and, for the person
who ran it, the envelope of the call (kept in this process, like the page sessions).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.approvals import ApprovalCoordinator, ApprovalRecord
from colonnade.calls.envelope import CallResult
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.refusals import GovernanceRefusal
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.approvals_page import (
    STATES,
    Decidable,
    approval_page,
    approval_url,
    approvals_page,
)
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Child, Html, tag
from colonnade.surfaces.pages.layout import APPROVALS_PATH, document, page_response

__all__ = ["ApprovalsView"]

_COMMENT_MAX = 2000
_KEPT_RESULTS = 256
_DONE = {
    "approved": "Approved; run the call with the button below, or the requester runs it with its token.",
    "denied": "Denied.",
    "ran": "Approved and run.",
    "run": "The approved call was run.",
}
"""What the page after a decision says (`?done=`): fixed text, never the query's own words."""


class ApprovalsView:
    def __init__(
        self, approvals: ApprovalCoordinator, *, tools_waiting: Callable[[], int] | None = None
    ) -> None:
        self.approvals = approvals
        self.tools_waiting = tools_waiting
        """How many downstream tool definitions wait for admission (`/ui/admissions`), if served."""
        self.desk = approvals.desk
        self._results: OrderedDict[tuple[str, str], CallResult] = OrderedDict()
        """(who ran it, approval id) -> the envelope of the call, for the page after the redirect."""

    def routes(self) -> list[BaseRoute]:
        return [
            Route(APPROVALS_PATH, self.queue, methods=["GET"]),
            Route(APPROVALS_PATH + "/{approval_id}", self.one, methods=["GET"]),
            Route(APPROVALS_PATH + "/{approval_id}/approve", self.approve, methods=["POST"]),
            Route(APPROVALS_PATH + "/{approval_id}/deny", self.deny, methods=["POST"]),
            Route(APPROVALS_PATH + "/{approval_id}/run", self.run, methods=["POST"]),
        ]

    async def queue(self, request: Request) -> Response:
        actor = principal_of_scope(request.scope)
        state = request.query_params.get("state", "pending")
        if state and state not in STATES:
            return self._refusal(request, 400, f"state is one of {', '.join(STATES)}, not {state[:40]!r}")
        try:
            records = await self.desk.list(actor, state or None)
        except GovernanceRefusal as refused:
            return self._refusal(request, refused.http_status, f"{refused.message} ({refused.code}).")
        page = approvals_page(
            records,
            state,
            now=_now(),
            decidable=self._decidable(actor),
            runnable=self._runnable(actor),
            visitor=visitor_of(request),
            tools_waiting=self.tools_waiting() if self.tools_waiting is not None else None,
        )
        return page_response(page)

    async def one(self, request: Request) -> Response:
        actor = principal_of_scope(request.scope)
        try:
            record = await self.desk.show(actor, request.path_params["approval_id"])
        except GovernanceRefusal as refused:
            return self._refusal(request, refused.http_status, f"{refused.message} ({refused.code}).")
        said = _DONE.get(request.query_params.get("done", ""))
        notice = tag("p", said, class_="note", id="notice") if said else None
        result = self._results.get((actor.key, record.id))
        return page_response(self._page(request, record, notice=notice, result=result))

    async def approve(self, request: Request) -> Response:
        return await self._decide(request, approve=True)

    async def deny(self, request: Request) -> Response:
        return await self._decide(request, approve=False)

    async def run(self, request: Request) -> Response:
        """The requester (or the approver) runs an approved call, as REST's resume does."""
        fields = await form_fields(request)
        refused_form = csrf_refusal(request, fields)
        if refused_form is not None:
            return refused_form
        actor, approval_id = principal_of_scope(request.scope), request.path_params["approval_id"]
        try:
            result = await self.approvals.resume_as(actor, approval_id)
        except GovernanceRefusal as refused:
            return self._refusal(request, refused.http_status, f"{refused.message} ({refused.code}).")
        return self._done(actor, approval_id, "run", result)

    async def _decide(self, request: Request, *, approve: bool) -> Response:
        fields = await form_fields(request)
        refused_form = csrf_refusal(request, fields)
        if refused_form is not None:
            return refused_form
        comment = fields.get("comment", "").strip()[:_COMMENT_MAX] or None
        actor, approval_id = principal_of_scope(request.scope), request.path_params["approval_id"]
        result: CallResult | None = None
        try:
            if approve:
                await self.desk.approve(actor, approval_id, comment)
                if fields.get("run"):
                    result = await self.approvals.resume_as(actor, approval_id)
            else:
                await self.desk.deny(actor, approval_id, comment)
        except GovernanceRefusal as refused:
            return self._refusal(request, refused.http_status, f"{refused.message} ({refused.code}).")
        done = "denied" if not approve else ("ran" if result is not None else "approved")
        return self._done(actor, approval_id, done, result)

    def _done(self, actor: Principal, approval_id: str, done: str, result: CallResult | None) -> Response:
        """303 to the approval's page, keeping the call's envelope for it (the newest few only)."""
        if result is not None:
            self._results[(actor.key, approval_id)] = result
            while len(self._results) > _KEPT_RESULTS:
                self._results.popitem(last=False)
        return RedirectResponse(f"{approval_url(approval_id)}?done={done}", status_code=303)

    def _page(
        self,
        request: Request,
        record: ApprovalRecord,
        *,
        notice: Child = None,
        result: CallResult | None = None,
    ) -> Html:
        actor = principal_of_scope(request.scope)
        return approval_page(
            record,
            now=_now(),
            may_decide=self._decidable(actor)(record),
            may_run=self._runnable(actor)(record),
            visitor=visitor_of(request),
            notice=notice,
            result=result,
        )

    def _decidable(self, actor: Principal) -> Decidable:
        def decidable(record: ApprovalRecord) -> bool:
            if record.state != "pending" or record.requester == actor.key:
                return False
            return actor.kind is PrincipalKind.SYSTEM or actor.persona in self.desk.approvers_for(record.tool)

        return decidable

    def _runnable(self, actor: Principal) -> Decidable:
        def runnable(record: ApprovalRecord) -> bool:
            return record.state == "approved" and actor.key in (record.requester, record.approver)

        return runnable

    def _refusal(self, request: Request, status: int, message: str) -> Response:
        page = document(
            "Approvals",
            tag("h1", "Approvals"),
            tag("p", message, class_="error", id="error"),
            tag("p", tag("a", "All approvals", href=APPROVALS_PATH)),
            section="Approvals",
            visitor=visitor_of(request),
        )
        return page_response(page, status)


def _now() -> datetime:
    return datetime.now(UTC)
