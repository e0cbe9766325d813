"""A real OAuth issuer on loopback for tests: signing keys, a JWKS URL, authorization server
metadata (RFC 8414) and a `client_credentials` token endpoint.

Tokens are signed with real RSA and EC keys (joserfc); the gateway under test fetches the public
keys from `/jwks` like any issuer's. `rotate()` replaces the signing key, as issuers do. Clients
registered with `add_client` get tokens carrying the claims given for them, for the resource
(RFC 8707) they ask for; that is what the MCP SDK's `ClientCredentialsOAuthProvider` drives.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, Key, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.loopback import serve_in_thread

__all__ = ["Issuer", "running_issuer"]


@dataclass
class Issuer:
    url: str = ""
    signing: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, auto_kid=True))
    ec: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256", auto_kid=True))
    retired: list[Key] = field(default_factory=list)
    clients: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    jwks_requests: int = 0
    available: bool = True

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    def jwks(self) -> dict[str, Any]:
        keys = [self.signing, self.ec, *self.retired]
        return {"keys": [dict(key.as_dict(private=False)) for key in keys]}

    def rotate(self) -> None:
        """A new RSA signing key; the old one stays published (as issuers do during a rollover)."""
        self.retired.append(self.signing)
        self.signing = RSAKey.generate_key(2048, auto_kid=True)

    def mint(
        self,
        claims: Mapping[str, Any],
        *,
        audience: str | None,
        ttl_s: int = 300,
        alg: str = "RS256",
        key: Key | None = None,
        header: Mapping[str, Any] | None = None,
        issued_at: float | None = None,
    ) -> str:
        now = int(issued_at if issued_at is not None else time.time())
        payload: dict[str, Any] = {"iss": self.url, "iat": now, "exp": now + ttl_s, "jti": uuid.uuid4().hex}
        if audience is not None:
            payload["aud"] = audience
        payload.update(claims)
        signer = key if key is not None else (self.ec if alg.startswith("ES") else self.signing)
        headers = {"alg": alg, "kid": signer.kid, **(header or {})}
        return jwt.encode(headers, payload, signer, algorithms=[alg])

    def add_client(self, client_id: str, secret: str, claims: Mapping[str, Any]) -> None:
        self.clients[client_id] = (secret, dict(claims))

    def app(self) -> Starlette:
        async def jwks(_: Request) -> Response:
            self.jwks_requests += 1
            if not self.available:
                return JSONResponse({"error": "down"}, 503)
            return JSONResponse(self.jwks())

        async def metadata(_: Request) -> Response:
            return JSONResponse(
                {
                    "issuer": self.url,
                    "authorization_endpoint": f"{self.url}/authorize",
                    "token_endpoint": f"{self.url}/token",
                    "jwks_uri": self.jwks_url,
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                    "response_types_supported": ["code"],
                }
            )

        async def token(request: Request) -> Response:
            form = await request.form()
            client = self._client(request.headers.get("authorization", ""))
            if client is None or form.get("grant_type") != "client_credentials":
                return JSONResponse({"error": "invalid_client"}, 401)
            resource = form.get("resource")
            minted = self.mint(client, audience=str(resource) if resource else None)
            return JSONResponse({"access_token": minted, "token_type": "Bearer", "expires_in": 300})

        return Starlette(
            routes=[
                Route("/jwks", jwks, methods=["GET"]),
                Route("/.well-known/oauth-authorization-server", metadata, methods=["GET"]),
                Route("/token", token, methods=["POST"]),
            ]
        )

    def _client(self, authorization: str) -> dict[str, Any] | None:
        scheme, _, encoded = authorization.partition(" ")
        if scheme.lower() != "basic":
            return None
        client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
        known = self.clients.get(client_id)
        return known[1] if known is not None and known[0] == secret else None


@contextmanager
def running_issuer() -> Iterator[Issuer]:
    issuer = Issuer()
    with serve_in_thread(issuer.app()) as url:
        issuer.url = url
        yield issuer
