"""The policies page's routes: the status, and the reload and test forms (CSRF-checked, as every form).

A reload is the gateway's own (every replica reloads its files, as after `POST /v1/policy/reload`);
a failed reload keeps the set in force and the page says why. The tests run off the event loop:
compiling the policies with each test file takes a moment.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.operators import may_read_policies, may_reload_policies
from colonnade.governance.policy.engine import PolicyError
from colonnade.governance.policy.gate import PolicyGate
from colonnade.governance.policy.sources import PolicySourceError
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.forms import csrf_refusal, form_fields, visitor_of
from colonnade.surfaces.pages.html import Html, tag
from colonnade.surfaces.pages.layout import POLICIES_PATH, document, page_response
from colonnade.surfaces.pages.policies_page import TestRow, policies_page

__all__ = ["PoliciesView"]


class PoliciesView:
    def __init__(self, gate: PolicyGate | None, reload: Callable[[], Awaitable[bool]] | None) -> None:
        self.gate = gate
        self.reload_all = reload

    def routes(self) -> list[BaseRoute]:
        return [
            Route(POLICIES_PATH, self.page, methods=["GET"]),
            Route(POLICIES_PATH + "/reload", self.reload, methods=["POST"]),
            Route(POLICIES_PATH + "/test", self.test, methods=["POST"]),
        ]

    async def page(self, request: Request) -> Response:
        refused = self._unreadable(request)
        return refused if refused is not None else self._page(request)

    async def reload(self, request: Request) -> Response:
        refused = await self._checked(request)
        if refused is not None:
            return refused
        if not may_reload_policies(principal_of_scope(request.scope)):
            message = "Reloading the policies needs the colonnade:security:write scope (A-AUTH-SCOPE)."
            return self._page(request, tag("p", message, class_="error", id="error"), status=403)
        if self.gate is None or self.reload_all is None:
            return self._page(request)
        if await self.reload_all():
            return self._page(
                request, tag("p", f"Reloaded: version {self.gate.version}.", class_="note", id="notice")
            )
        said = f"The reload failed; the set in force keeps serving: {self.gate.problem}"
        return self._page(request, tag("p", said, class_="error", id="error"), status=422)

    async def test(self, request: Request) -> Response:
        refused = await self._checked(request)
        if refused is not None or self.gate is None:
            return refused or self._page(request)
        try:
            results = await asyncio.to_thread(self.gate.run_tests)
        except (PolicySourceError, PolicyError) as exc:
            return self._page(
                request, tag("p", f"The tests could not run: {exc}", class_="error", id="error"), status=422
            )
        rows: list[TestRow] = [(r.file, r.name, r.outcome.value) for r in results]
        return self._page(request, tests=rows)

    async def _checked(self, request: Request) -> Response | None:
        fields = await form_fields(request)
        return csrf_refusal(request, fields) or self._unreadable(request)

    def _unreadable(self, request: Request) -> Response | None:
        if may_read_policies(principal_of_scope(request.scope)):
            return None
        message = "The policies are shown with the colonnade:security:read scope (A-AUTH-SCOPE)."
        page = document(
            "Policies",
            tag("h1", "Policies"),
            tag("p", message, class_="error", id="error"),
            visitor=visitor_of(request),
        )
        return page_response(page, 403)

    def _page(
        self,
        request: Request,
        notice: Html | None = None,
        *,
        tests: list[TestRow] | None = None,
        status: int = 200,
    ) -> Response:
        page = policies_page(
            self.gate.status() if self.gate is not None else None,
            visitor=visitor_of(request),
            may_reload=may_reload_policies(principal_of_scope(request.scope)),
            notice=notice,
            tests=tests,
        )
        return page_response(page, status)
