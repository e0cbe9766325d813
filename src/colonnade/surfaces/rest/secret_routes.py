"""REST for stored secrets: set, rotate, list and delete, for callers with the security scopes.

A value goes in (the request body, over the gateway's TLS in production) and never comes out: the
answers carry names, scopes, versions and sealing key ids. The rules are `SecretAdmin`'s, the same
the CLI follows; a refusal renders with its registry code and HTTP status.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.plain_data import plain_fields
from colonnade.governance.refusals import GovernanceRefusal
from colonnade.governance.secrets import SecretAdmin, SecretView
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.envelope_parsing import EnvelopeRejection, parse_envelope, read_body
from colonnade.surfaces.rest.render import error_response, json_response

__all__ = ["SecretRoutes"]

_MAX_BODY = 96 * 1024


class SecretBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str = Field(min_length=1)
    tenant: str | None = None
    overlap_s: float | None = Field(default=None, ge=0, le=90 * 86_400)


class SecretRoutes:
    def __init__(self, admin: SecretAdmin) -> None:
        self.admin = admin

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/secrets", self.list_secrets, methods=["GET"]),
            Route("/v1/secrets/{name}", self.set_secret, methods=["PUT"]),
            Route("/v1/secrets/{name}/rotate", self.rotate_secret, methods=["POST"]),
            Route("/v1/secrets/{name}", self.delete_secret, methods=["DELETE"]),
        ]

    async def list_secrets(self, request: Request) -> Response:
        listed = self.admin.list(principal_of_scope(request.scope), request.query_params.get("tenant"))
        return await _answer(listed, lambda views: {"secrets": [_view(view) for view in views]})

    async def set_secret(self, request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        who, name = principal_of_scope(request.scope), request.path_params["name"]
        done = self.admin.set(who, name, body.value, tenant=body.tenant)
        return await _answer(done, lambda view: {"secret": _view(view)}, 201)

    async def rotate_secret(self, request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        who, name = principal_of_scope(request.scope), request.path_params["name"]
        done = self.admin.rotate(who, name, body.value, tenant=body.tenant, overlap_s=body.overlap_s)
        return await _answer(done, lambda view: {"secret": _view(view)}, 201)

    async def delete_secret(self, request: Request) -> Response:
        who, name = principal_of_scope(request.scope), request.path_params["name"]
        tenant = request.query_params.get("tenant")
        done = self.admin.delete(who, name, tenant=tenant)
        return await _answer(done, lambda removed: {"deleted": name, "tenant": tenant, "versions": removed})


def _view(view: SecretView) -> dict[str, Any]:
    return {**plain_fields(view), "current": view.current}


async def _body(request: Request) -> SecretBody | EnvelopeRejection:
    body = await read_body(request, _MAX_BODY)
    return body if isinstance(body, EnvelopeRejection) else parse_envelope(body, SecretBody)


def _rejected(rejection: EnvelopeRejection) -> Response:
    # The violations would quote the body back, value included: say where, never what.
    return error_response(rejection.code, rejection.message, rejection.http_status)


async def _answer(
    work: Awaitable[Any], render: Callable[[Any], dict[str, Any]], status_code: int = 200
) -> Response:
    try:
        done = await work
    except GovernanceRefusal as refused:
        return error_response(refused.code, refused.message, refused.http_status)
    return json_response(render(done), status_code)
