"""OAuth discovery and registration routes: protected resource metadata (RFC 9728) and dynamic
client registration of agents (RFC 7591).

The metadata is public (clients read it before they hold a token), at the root well-known path
and at the path-suffixed one of the resource (`/.well-known/oauth-protected-resource/mcp`).
Registration is off unless `auth.dynamic_registration` is set; it then needs a credential with
`colonnade:security:write` (the "initial access token" of RFC 7591 section 3) and registers an
agent of that officer's tenant: `colonnade_allowed_tools` is its allow-list, `jwks` its key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.call_errors import spec_for
from colonnade.governance.agent_admin import AgentAdmin, AgentRequest
from colonnade.governance.identity.resource_metadata import (
    WELL_KNOWN,
    metadata_path,
    protected_resource_metadata,
)
from colonnade.governance.refusals import GovernanceRefusal
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.envelope_parsing import EnvelopeRejection, parse_envelope, read_body
from colonnade.surfaces.rest.render import json_response

__all__ = ["REGISTER_PATH", "metadata_paths", "oauth_routes"]

REGISTER_PATH = "/register"
_MAX_BODY = 64 * 1024


class ClientMetadata(BaseModel):
    """The RFC 7591 fields an agent registration reads; others are ignored, as the RFC asks."""

    model_config = ConfigDict(extra="ignore")

    colonnade_allowed_tools: list[str] = Field(min_length=1)
    client_name: str | None = Field(default=None, max_length=128)
    jwks: dict[str, Any] | None = None


def metadata_paths(resource: str) -> frozenset[str]:
    """The public paths of the metadata (the edge lets them through without a credential)."""
    return frozenset({WELL_KNOWN, metadata_path(resource)})


def oauth_routes(
    resource: str,
    issuers: Sequence[str],
    agents: AgentAdmin | None,
    *,
    registration: bool,
    certificate_bound: bool = False,
) -> list[BaseRoute]:
    document = protected_resource_metadata(resource, issuers, certificate_bound=certificate_bound)

    async def metadata(_: Request) -> Response:
        return json_response(document)

    async def register(request: Request) -> Response:
        assert agents is not None
        body = await read_body(request, _MAX_BODY)
        parsed = body if isinstance(body, EnvelopeRejection) else parse_envelope(body, ClientMetadata)
        if isinstance(parsed, EnvelopeRejection):
            return _registration_error(parsed.message)
        keys = (parsed.jwks or {}).get("keys")
        if parsed.jwks is not None and (not isinstance(keys, list) or len(keys) != 1):
            return _registration_error("jwks must hold exactly one public key: the agent's")
        asked = AgentRequest(
            allowed_tools=tuple(parsed.colonnade_allowed_tools),
            agent_id=None,
            public_key=keys[0] if keys else None,
            via="rfc7591",
        )
        try:
            agent = await agents.register(principal_of_scope(request.scope), asked)
        except GovernanceRefusal as refused:
            if refused.http_status == 400:
                return _registration_error(refused.message)
            return json_response({"error": "access_denied", "error_description": refused.message}, 403)
        answer: dict[str, Any] = {
            "client_id": agent.id,
            "client_id_issued_at": int(agent.created_at.timestamp()),
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "private_key_jwt" if agent.public_key else "none",
            "colonnade_tenant": agent.tenant,
            "colonnade_allowed_tools": list(agent.allowed_tools),
        }
        if parsed.client_name is not None:
            answer["client_name"] = parsed.client_name
        if agent.public_key is not None:
            answer["jwks"] = {"keys": [agent.public_key]}
        return json_response(answer, 201)

    paths = sorted(metadata_paths(resource))
    routes: list[BaseRoute] = [Route(path, metadata, methods=["GET"]) for path in paths]
    if registration and agents is not None:
        routes.append(Route(REGISTER_PATH, register, methods=["POST"]))
    return routes


def _registration_error(message: str) -> Response:
    """RFC 7591 section 3.2.2, with the registry's code and fix beside the standard fields."""
    spec = spec_for("A-AUTH-REGISTRATION")
    body = {
        "error": "invalid_client_metadata",
        "error_description": message,
        "code": spec.code,
        "fix": spec.fix,
    }
    return json_response(body, 400)
