"""The gateway as the authorization server of its own principals: the token endpoint (RFC 8693
token exchange), its signing keys (JWKS) and its metadata (RFC 8414).

All three are public paths: the token request carries its credentials in the form (the
`subject_token`, with a `DPoP` proof header when that token is bound), not in `Authorization`.
The body is `application/x-www-form-urlencoded`; a parameter given twice is refused (RFC 6749
section 3.2). Errors are RFC 6749 section 5.2 objects with the registry code beside them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from colonnade.governance.identity.delegation import (
    ExchangeRefusal,
    ExchangeRequest,
    TokenExchange,
)
from colonnade.governance.identity.dpop import DPOP_ALGORITHMS
from colonnade.surfaces.edge_auth import request_url
from colonnade.surfaces.envelope_parsing import EnvelopeRejection, read_body
from colonnade.surfaces.rest.render import json_response

__all__ = [
    "AS_METADATA_PATH",
    "JWKS_PATH",
    "TOKEN_PATH",
    "TOKEN_PATHS",
    "authorization_server_metadata",
    "token_routes",
]

TOKEN_PATH = "/oauth/token"
JWKS_PATH = "/oauth/jwks"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
TOKEN_PATHS = frozenset({TOKEN_PATH, JWKS_PATH, AS_METADATA_PATH})
_MAX_BODY = 32 * 1024
_FIELDS = frozenset(ExchangeRequest.__dataclass_fields__)
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def authorization_server_metadata(issuer: str) -> dict[str, Any]:
    """RFC 8414: where the token endpoint and the keys are, and what the endpoint accepts."""
    return {
        "issuer": issuer,
        "token_endpoint": issuer + TOKEN_PATH,
        "jwks_uri": issuer + JWKS_PATH,
        "grant_types_supported": ["urn:ietf:params:oauth:grant-type:token-exchange"],
        "token_endpoint_auth_methods_supported": ["none"],
        "dpop_signing_alg_values_supported": list(DPOP_ALGORITHMS),
        "response_types_supported": [],
    }


def token_routes(exchange: TokenExchange, jwks: list[dict[str, Any]]) -> list[BaseRoute]:
    metadata = authorization_server_metadata(exchange.issuer)

    async def token(request: Request) -> Response:
        parsed = await _form(request)
        if isinstance(parsed, ExchangeRefusal):
            return _refusal(parsed)
        url = request_url(request.headers, request.scope)
        outcome = await exchange.exchange(
            parsed, method=request.method, url=url, path=request.url.path, dpop=request.headers.get("dpop")
        )
        if isinstance(outcome, ExchangeRefusal):
            return _refusal(outcome)
        answer = json_response(outcome.response())
        answer.headers.update(_NO_STORE)
        return answer

    async def keys(_: Request) -> Response:
        return json_response({"keys": jwks})

    async def server_metadata(_: Request) -> Response:
        return json_response(metadata)

    return [
        Route(TOKEN_PATH, token, methods=["POST"]),
        Route(JWKS_PATH, keys, methods=["GET"]),
        Route(AS_METADATA_PATH, server_metadata, methods=["GET"]),
    ]


async def _form(request: Request) -> ExchangeRequest | ExchangeRefusal:
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        return ExchangeRefusal(
            "invalid_request", "send the token request as application/x-www-form-urlencoded (RFC 6749)"
        )
    body = await read_body(request, _MAX_BODY)
    if isinstance(body, EnvelopeRejection):
        return ExchangeRefusal("invalid_request", body.message)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        return ExchangeRefusal("invalid_request", "the body is not a well-formed URL-encoded form")
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name in fields:
            return ExchangeRefusal("invalid_request", f"the parameter {name!r} is given more than once")
        fields[name] = value
    return ExchangeRequest(**{name: value for name, value in fields.items() if name in _FIELDS})


def _refusal(refusal: ExchangeRefusal) -> Response:
    answer = json_response(refusal.response(), refusal.status)
    answer.headers.update(_NO_STORE)
    return answer
