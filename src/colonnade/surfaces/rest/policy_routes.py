"""REST for the policy gate: `GET /v1/policy` (the set in force and the last load problem) and
`POST /v1/policy/reload` (re-read the policy files now).

Reading needs `colonnade:security:read` (the route table of the edge); reloading needs
`colonnade:security:write`, or the anonymous caller of a gateway without authentication
(loopback only). A reload that fails keeps the set in force and answers 422 with the problem.
The gateway's `reload` also has every other replica reload its files.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.operators import may_reload_policies
from colonnade.governance.personas import Scope
from colonnade.governance.policy.gate import PolicyGate
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.rest.render import error_response, json_response

__all__ = ["PolicyRoutes"]


class PolicyRoutes:
    def __init__(self, gate: PolicyGate | None, reload: Callable[[], Awaitable[bool]] | None = None) -> None:
        self.gate = gate
        self._reload = reload if reload is not None else gate.reload if gate is not None else None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/policy", self.show, methods=["GET"]),
            Route("/v1/policy/reload", self.reload, methods=["POST"]),
        ]

    async def show(self, request: Request) -> Response:
        if self.gate is None:
            return json_response({"enabled": False})
        return json_response({"enabled": True, **self.gate.status()})

    async def reload(self, request: Request) -> Response:
        principal = principal_of_scope(request.scope)
        if not may_reload_policies(principal):
            return error_response(
                "A-AUTH-SCOPE",
                "reloading the policies needs the colonnade:security:write scope",
                403,
                required=Scope.SECURITY_WRITE.value,
            )
        if self.gate is None or self._reload is None:
            return json_response({"enabled": False, "reloaded": False})
        reloaded = await self._reload()
        return json_response(
            {"enabled": True, "reloaded": reloaded, **self.gate.status()}, 200 if reloaded else 422
        )
