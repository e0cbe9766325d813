"""REST for the admission of downstream tools: what is pinned, what waits, and approving it.

`GET /v1/servers/{name}/admission` lists the pins and the parked tools (each with its readable diff
and poisoning findings); reading is open like the rest of `/v1/servers`. `POST
/v1/servers/{name}/tools/{tool}/admit` is one approval, by an administrator (as for adding
servers); the approver is the caller's principal. A gateway without authentication has one
anonymous caller, so the body's `approver` names the person (`{"approver": "alice"}`), recorded as
`anonymous:alice`: on such a gateway four-eyes rests on the people at the one machine it serves.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.catalog.tool_pins import AdmissionRefused
from colonnade.governance.operators import may_administer
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.envelope_parsing import DEFAULT_MAX_BODY_BYTES, EnvelopeRejection, read_body
from colonnade.surfaces.rest.render import error_response, json_response

__all__ = ["AdmissionRoutes", "ToolAdmissionAdmin"]


class ToolAdmissionAdmin(Protocol):
    """What the routes need from the gateway's servers (the runtime's `Servers`)."""

    def admission_of(self, name: str) -> dict[str, Any]: ...

    async def admit(self, name: str, tool: str, approver: str, principal: Principal | None = None) -> Any: ...


class AdmissionRoutes:
    def __init__(
        self,
        servers: ToolAdmissionAdmin,
        *,
        admin_api: bool = False,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.servers = servers
        self.admin_api = admin_api
        self.max_body_bytes = max_body_bytes

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/servers/{name}/admission", self.admission, methods=["GET"]),
            Route("/v1/servers/{name}/tools/{tool}/admit", self.admit, methods=["POST"]),
        ]

    async def admission(self, request: Request) -> Response:
        name = request.path_params["name"]
        try:
            return json_response(self.servers.admission_of(name))
        except KeyError:
            return error_response("I-REQ-UNKNOWN-SERVER", f"no server named {name!r}", 404)

    async def admit(self, request: Request) -> Response:
        principal = principal_of_scope(request.scope)
        if not may_administer(principal, self.admin_api):
            why = (
                "server.admin_api is off"
                if not self.admin_api
                else "the caller may not administer this gateway"
            )
            return error_response(
                "A-AUTH-ADMIN", f"admitting downstream tools over HTTP is not allowed: {why}", 403
            )
        approver = await self._approver(request, principal)
        if isinstance(approver, Response):
            return approver
        name, tool = request.path_params["name"], request.path_params["tool"]
        try:
            outcome = await self.servers.admit(name, tool, approver, principal)
        except KeyError:
            return error_response("I-REQ-UNKNOWN-SERVER", f"no server named {name!r}", 404)
        except AdmissionRefused as refused:
            return error_response(refused.code, refused.message, refused.http_status)
        return json_response(
            {
                "tool": outcome.tool,
                "admitted": outcome.admitted,
                "approvals": outcome.approvals,
                "digest": outcome.digest,
            }
        )

    async def _approver(self, request: Request, principal: Principal) -> str | Response:
        if principal.kind is not PrincipalKind.ANONYMOUS:
            return principal.key
        body = await read_body(request, self.max_body_bytes)
        if isinstance(body, EnvelopeRejection):
            return error_response(body.code, body.message, body.http_status)
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            data = None
        named = data.get("approver") if isinstance(data, dict) else None
        if not isinstance(named, str) or not named.strip():
            return error_response(
                "I-REQ-ENVELOPE",
                'this gateway has no authentication: name who approves in the body, {"approver": "alice"}',
                400,
                field="approver",
            )
        return f"anonymous:{named.strip()}"
