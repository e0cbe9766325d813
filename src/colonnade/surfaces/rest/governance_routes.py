"""REST for API keys, agents and subscriptions: JSON in, the governance services decide, JSON out.

The routes only parse and render; who may do what is the services' business (the same rules the
CLI follows), and a refusal renders with its registry code and HTTP status. A new or rotated
key's secret is in the answer once (`token`) and nowhere else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.agent_admin import AgentAdmin, AgentRequest, agent_view
from colonnade.governance.key_admin import IssuedKey, KeyAdmin, KeyRequest, key_view
from colonnade.governance.plain_data import plain_fields
from colonnade.governance.refusals import GovernanceRefusal
from colonnade.governance.subscriptions import SubscriptionAdmin
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.envelope_parsing import EnvelopeRejection, parse_envelope, read_body
from colonnade.surfaces.rest.render import error_response, json_response

__all__ = ["GovernanceRoutes"]

M = TypeVar("M", bound=BaseModel)
_MAX_BODY = 64 * 1024


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyBody(_Body):
    owner: str = Field(min_length=1, max_length=256)
    persona: str
    tenant: str | None = None
    team: str | None = None
    scopes: list[str] | None = None
    expires_in_s: int | None = Field(default=None, ge=60, le=400 * 86_400)
    label: str | None = Field(default=None, max_length=200)


class AgentBody(_Body):
    allowed_tools: list[str] = Field(min_length=1)
    agent_id: str | None = None
    tenant: str | None = None
    owner: str | None = None
    public_key: dict[str, Any] | None = None


class SubscriptionBody(_Body):
    api: str = Field(min_length=3, max_length=300)
    subscriber: str | None = None


class GovernanceRoutes:
    def __init__(
        self,
        keys: KeyAdmin | None = None,
        agents: AgentAdmin | None = None,
        subscriptions: SubscriptionAdmin | None = None,
    ) -> None:
        self.keys = keys
        self.agents = agents
        self.subscriptions = subscriptions

    def routes(self) -> list[BaseRoute]:
        routes: list[BaseRoute] = []
        if self.keys is not None:
            routes += [
                Route("/v1/keys", self.create_key, methods=["POST"]),
                Route("/v1/keys", self.list_keys, methods=["GET"]),
                Route("/v1/keys/{key_id}/rotate", self.rotate_key, methods=["POST"]),
                Route("/v1/keys/{key_id}", self.revoke_key, methods=["DELETE"]),
            ]
        if self.agents is not None:
            routes += [
                Route("/v1/agents", self.register_agent, methods=["POST"]),
                Route("/v1/agents", self.list_agents, methods=["GET"]),
                Route("/v1/agents/{agent_id}", self.revoke_agent, methods=["DELETE"]),
            ]
        if self.subscriptions is not None:
            routes += [
                Route("/v1/subscriptions", self.subscribe, methods=["POST"]),
                Route("/v1/subscriptions", self.list_subscriptions, methods=["GET"]),
                Route("/v1/subscriptions/{subscription_id}/approve", self.approve, methods=["POST"]),
                Route("/v1/subscriptions/{subscription_id}/reject", self.reject, methods=["POST"]),
                Route("/v1/subscriptions/{subscription_id}", self.end_subscription, methods=["DELETE"]),
            ]
        return routes

    # -- keys ------------------------------------------------------------------------------------

    async def create_key(self, request: Request) -> Response:
        assert self.keys is not None
        body = await _body(request, KeyBody)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        asked = KeyRequest(
            owner=body.owner,
            persona=body.persona,
            tenant=body.tenant,
            team=body.team,
            scopes=tuple(body.scopes) if body.scopes is not None else None,
            expires_in_s=body.expires_in_s,
            label=body.label,
        )
        return await _answer(self.keys.create(principal_of_scope(request.scope), asked), _issued, 201)

    async def list_keys(self, request: Request) -> Response:
        assert self.keys is not None
        listed = self.keys.list(principal_of_scope(request.scope))
        return await _answer(listed, lambda keys: {"keys": [key_view(key) for key in keys]})

    async def rotate_key(self, request: Request) -> Response:
        assert self.keys is not None
        rotated = self.keys.rotate(principal_of_scope(request.scope), request.path_params["key_id"])
        return await _answer(rotated, _issued, 201)

    async def revoke_key(self, request: Request) -> Response:
        assert self.keys is not None
        revoked = self.keys.revoke(principal_of_scope(request.scope), request.path_params["key_id"])
        return await _answer(revoked, lambda key: {"key": key_view(key)})

    # -- agents ----------------------------------------------------------------------------------

    async def register_agent(self, request: Request) -> Response:
        assert self.agents is not None
        body = await _body(request, AgentBody)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        asked = AgentRequest(
            allowed_tools=tuple(body.allowed_tools),
            agent_id=body.agent_id,
            tenant=body.tenant,
            owner=body.owner,
            public_key=body.public_key,
            via="rest",
        )
        registered = self.agents.register(principal_of_scope(request.scope), asked)
        return await _answer(registered, lambda agent: {"agent": agent_view(agent)}, 201)

    async def list_agents(self, request: Request) -> Response:
        assert self.agents is not None
        listed = self.agents.list(principal_of_scope(request.scope))
        return await _answer(listed, lambda agents: {"agents": [agent_view(agent) for agent in agents]})

    async def revoke_agent(self, request: Request) -> Response:
        assert self.agents is not None
        revoked = self.agents.revoke(principal_of_scope(request.scope), request.path_params["agent_id"])
        return await _answer(revoked, lambda agent: {"agent": agent_view(agent)})

    # -- subscriptions ---------------------------------------------------------------------------

    async def subscribe(self, request: Request) -> Response:
        assert self.subscriptions is not None
        body = await _body(request, SubscriptionBody)
        if isinstance(body, EnvelopeRejection):
            return _rejected(body)
        asked = self.subscriptions.request(principal_of_scope(request.scope), body.api, body.subscriber)
        return await _answer(asked, lambda record: {"subscription": _record(record)}, 201)

    async def list_subscriptions(self, request: Request) -> Response:
        assert self.subscriptions is not None
        listed = self.subscriptions.list(principal_of_scope(request.scope))
        return await _answer(listed, lambda records: {"subscriptions": [_record(r) for r in records]})

    async def approve(self, request: Request) -> Response:
        assert self.subscriptions is not None
        who, which = principal_of_scope(request.scope), request.path_params["subscription_id"]
        return await _answer(self.subscriptions.approve(who, which), lambda r: {"subscription": _record(r)})

    async def reject(self, request: Request) -> Response:
        assert self.subscriptions is not None
        who, which = principal_of_scope(request.scope), request.path_params["subscription_id"]
        return await _answer(self.subscriptions.reject(who, which), lambda r: {"subscription": _record(r)})

    async def end_subscription(self, request: Request) -> Response:
        assert self.subscriptions is not None
        who, which = principal_of_scope(request.scope), request.path_params["subscription_id"]
        return await _answer(self.subscriptions.revoke(who, which), lambda r: {"subscription": _record(r)})


async def _body(request: Request, model: type[M]) -> M | EnvelopeRejection:
    body = await read_body(request, _MAX_BODY)
    return body if isinstance(body, EnvelopeRejection) else parse_envelope(body, model)


def _rejected(rejection: EnvelopeRejection) -> Response:
    details = dict(rejection.details)
    if rejection.violations:
        details["violations"] = [violation.to_dict() for violation in rejection.violations]
    return error_response(rejection.code, rejection.message, rejection.http_status, **details)


async def _answer(
    work: Awaitable[Any], render: Callable[[Any], dict[str, Any]], status_code: int = 200
) -> Response:
    try:
        done = await work
    except GovernanceRefusal as refused:
        return error_response(refused.code, refused.message, refused.http_status)
    return json_response(render(done), status_code)


def _issued(issued: IssuedKey) -> dict[str, Any]:
    return {"key": key_view(issued.record), "token": issued.token}


def _record(record: Any) -> dict[str, Any]:
    return plain_fields(record)
