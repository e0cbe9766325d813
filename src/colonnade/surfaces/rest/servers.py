"""REST for downstream MCP servers and the gateway's status: `/v1/servers...` and `GET /v1/status`.

Reading is open like the rest of `/v1`. Adding, replacing, removing and restarting servers changes what runs
on the gateway's host (a stdio server is a process), so it needs `server.admin_api: true` and a
caller allowed to administer: an `admin` persona, or the anonymous caller of a gateway without
authentication (loopback only). Servers added here last until the gateway stops; the other
replicas apply the same change (the runtime's `Servers` publishes it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.config import McpServerSettings
from colonnade.governance.operators import may_administer
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.envelope_parsing import DEFAULT_MAX_BODY_BYTES, EnvelopeRejection, read_body
from colonnade.surfaces.new_server import ServerRefused, checked_server
from colonnade.surfaces.rest.render import error_response, json_response

__all__ = ["ServerAdmin", "ServersApi"]

StatusReport = Callable[[], Awaitable[dict[str, Any]]]


class ServerAdmin(Protocol):
    """What the REST routes need from the gateway's servers (the runtime's `Servers`)."""

    def status(self) -> list[dict[str, Any]]: ...

    def settings(self) -> list[McpServerSettings]: ...

    def unstartable(self, settings: McpServerSettings) -> str | None: ...

    async def add(self, settings: McpServerSettings) -> None: ...

    async def remove(self, name: str) -> None: ...

    async def restart(self, name: str) -> None: ...

    async def replace(self, settings: McpServerSettings) -> None: ...


class ServersApi:
    def __init__(
        self,
        servers: ServerAdmin,
        status: StatusReport,
        *,
        admin_api: bool = False,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.servers = servers
        self.report = status
        self.admin_api = admin_api
        self.max_body_bytes = max_body_bytes

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/v1/status", self.status, methods=["GET"]),
            Route("/v1/servers", self.list, methods=["GET"]),
            Route("/v1/servers", self.add, methods=["POST"]),
            Route("/v1/servers/{name}", self.get, methods=["GET"]),
            Route("/v1/servers/{name}", self.remove, methods=["DELETE"]),
            Route("/v1/servers/{name}", self.replace, methods=["PUT"]),
            Route("/v1/servers/{name}/restart", self.restart, methods=["POST"]),
        ]

    async def status(self, request: Request) -> Response:
        """`GET /v1/status`: the gateway, its catalog, each server's health and traffic, routing figures."""
        return json_response(await self.report())

    async def list(self, request: Request) -> Response:
        return json_response({"servers": self.servers.status()})

    async def get(self, request: Request) -> Response:
        name = request.path_params["name"]
        status = self._status_of(name)
        settings = next((s for s in self.servers.settings() if s.name == name), None)
        if status is None or settings is None:
            return self._unknown(name)
        return json_response({**status, "config": settings.model_dump(mode="json", exclude_none=True)})

    async def add(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await read_body(request, self.max_body_bytes)
        if isinstance(body, EnvelopeRejection):
            return error_response(body.code, body.message, body.http_status)
        settings = checked_server(self.servers, body)
        if isinstance(settings, ServerRefused):
            extra = {"problems": settings.problems} if settings.problems else {}
            return error_response(settings.code, settings.message, settings.http_status, **extra)
        await self.servers.add(settings)
        return json_response(self._status_of(settings.name), status_code=201)

    async def replace(self, request: Request) -> Response:
        """`PUT /v1/servers/{name}`: a new definition for a server (a fixed command, say); it restarts."""
        refused = self._refused(request)
        if refused is not None:
            return refused
        name = request.path_params["name"]
        if self._status_of(name) is None:
            return self._unknown(name)
        body = await read_body(request, self.max_body_bytes)
        if isinstance(body, EnvelopeRejection):
            return error_response(body.code, body.message, body.http_status)
        settings = checked_server(self.servers, body, replaces=name)
        if isinstance(settings, ServerRefused):
            extra = {"problems": settings.problems} if settings.problems else {}
            return error_response(settings.code, settings.message, settings.http_status, **extra)
        await self.servers.replace(settings)
        return json_response(self._status_of(name))

    async def remove(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        name = request.path_params["name"]
        if self._status_of(name) is None:
            return self._unknown(name)
        await self.servers.remove(name)
        return json_response({"removed": name})

    async def restart(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        name = request.path_params["name"]
        if self._status_of(name) is None:
            return self._unknown(name)
        await self.servers.restart(name)
        return json_response({"restarting": name}, status_code=202)

    def _status_of(self, name: str) -> dict[str, Any] | None:
        return next((status for status in self.servers.status() if status["name"] == name), None)

    def _refused(self, request: Request) -> Response | None:
        if may_administer(principal_of_scope(request.scope), self.admin_api):
            return None
        why = (
            "server.admin_api is off" if not self.admin_api else "the caller may not administer this gateway"
        )
        return error_response(
            "A-AUTH-ADMIN", f"changing downstream servers over HTTP is not allowed: {why}", 403
        )

    def _unknown(self, name: str) -> Response:
        known = [status["name"] for status in self.servers.status()]
        return error_response("I-REQ-UNKNOWN-SERVER", f"no server named {name!r}", 404, known=known)
