"""REST for approvals: list and read them, approve or deny with a comment, run an approved call.

The approval desk decides who may see and decide what (four-eyes, approver personas, tenant); the
routes parse and render. `POST /v1/approvals/{id}/approve` with `"run": true` also runs the
approved call at once (as its requester) and answers its result beside the approval;
`POST /v1/approvals/{id}/resume` lets the requester run it later. A result is in the envelope
version the `Colonnade-Envelope-Version` header asks for, version 1 without it (as `/v1/calls`).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.approvals import ApprovalCoordinator, approval_view
from colonnade.calls.envelope import CallResult
from colonnade.calls.envelope_v1 import rendered
from colonnade.governance.refusals import GovernanceRefusal, InvalidRequest
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.envelope_parsing import EnvelopeRejection, parse_envelope, read_body
from colonnade.surfaces.rest.render import (
    DEFAULT_ENVELOPE_VERSION,
    error_response,
    header_version,
    json_response,
)

__all__ = ["ApprovalRoutes"]

M = TypeVar("M", bound=BaseModel)
_MAX_BODY = 16 * 1024
_STATES = ("pending", "approved", "denied", "used", "expired")


class DecisionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comment: str | None = Field(default=None, max_length=2000)
    run: bool = False
    """Approve only: run the approved call now, as its requester."""


class ResumeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    call_id: str | None = Field(default=None, max_length=200)


class ApprovalRoutes:
    def __init__(self, approvals: ApprovalCoordinator) -> None:
        self.approvals = approvals
        self.desk = approvals.desk

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/approvals", self.list, methods=["GET"]),
            Route("/v1/approvals/{approval_id}", self.show, methods=["GET"]),
            Route("/v1/approvals/{approval_id}/approve", self.approve, methods=["POST"]),
            Route("/v1/approvals/{approval_id}/deny", self.deny, methods=["POST"]),
            Route("/v1/approvals/{approval_id}/resume", self.resume, methods=["POST"]),
        ]

    async def list(self, request: Request) -> Response:
        actor = principal_of_scope(request.scope)
        state = request.query_params.get("state")
        try:
            if state is not None and state not in _STATES:
                raise InvalidRequest(f"state is one of {', '.join(_STATES)}, not {state!r}")
            records = await self.desk.list(actor, state)
        except GovernanceRefusal as refused:
            return error_response(refused.code, refused.message, refused.http_status)
        return json_response({"approvals": [approval_view(record, actor) for record in records]})

    async def show(self, request: Request) -> Response:
        actor = principal_of_scope(request.scope)
        try:
            record = await self.desk.show(actor, request.path_params["approval_id"])
        except GovernanceRefusal as refused:
            return error_response(refused.code, refused.message, refused.http_status)
        return json_response({"approval": approval_view(record, actor)})

    async def approve(self, request: Request) -> Response:
        return await self._decide(request, approve=True)

    async def deny(self, request: Request) -> Response:
        return await self._decide(request, approve=False)

    async def _decide(self, request: Request, *, approve: bool) -> Response:
        body = await _body(request, DecisionBody)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        actor, approval_id = principal_of_scope(request.scope), request.path_params["approval_id"]
        answer: dict[str, Any] = {}
        try:
            if approve:
                record = await self.desk.approve(actor, approval_id, body.comment)
            else:
                if body.run:
                    raise InvalidRequest("`run` goes with approve only")
                record = await self.desk.deny(actor, approval_id, body.comment)
            answer["approval"] = approval_view(record, actor)
            if approve and body.run:
                result = await self.approvals.resume_as(actor, approval_id)
                answer["result"] = _shown(result, request)
        except GovernanceRefusal as refused:
            return error_response(refused.code, refused.message, refused.http_status)
        return json_response(answer)

    async def resume(self, request: Request) -> Response:
        body = await _body(request, ResumeBody)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        actor, approval_id = principal_of_scope(request.scope), request.path_params["approval_id"]
        try:
            result = await self.approvals.resume_as(actor, approval_id, call_id=body.call_id)
        except GovernanceRefusal as refused:
            return error_response(refused.code, refused.message, refused.http_status)
        return json_response({"result": _shown(result, request)})


async def _body(request: Request, model: type[M]) -> M | EnvelopeRejection:
    """The body as `model`; an empty body means every field's default."""
    raw = await read_body(request, _MAX_BODY)
    if isinstance(raw, EnvelopeRejection):
        return raw
    return parse_envelope(raw if raw.strip() else b"{}", model)


def _shown(result: CallResult, request: Request) -> dict[str, Any]:
    """The result in the envelope version the request's header chose (an invalid one: version 1)."""
    asked = header_version(request.headers)
    version = asked if isinstance(asked, int) else DEFAULT_ENVELOPE_VERSION
    return rendered(result, version)


def _rejected(rejection: EnvelopeRejection) -> Response:
    details = dict(rejection.details)
    if rejection.violations:
        details["violations"] = [violation.to_dict() for violation in rejection.violations]
    return error_response(rejection.code, rejection.message, rejection.http_status, **details)
