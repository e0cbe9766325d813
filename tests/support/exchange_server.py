"""A real OAuth authorization server for token exchange (RFC 8693), built on Authlib (Flask).

Run as its own process: `python tests/support/exchange_server.py --port N --client ID:SECRET`.
It issues the users' access tokens (`POST /mint`, the test's stand-in for a login), publishes
its keys at `/jwks`, and at `/token` exchanges a subject token it issued for one narrowed to the
requested audience: `sub` the user, `act.sub` the authenticated client (or, given an actor
token, the agent it names, the client nested as the prior actor), `scope` at most the
subject's, expiring no later than the subject token. `/stats` counts the exchanges granted.
"""

from __future__ import annotations

import argparse
import time
import uuid
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError, UnauthorizedClientError
from authlib.oauth2.rfc6749.grants.base import BaseGrant, TokenEndpointMixin
from flask import Flask, jsonify, request
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
EXCHANGED_TTL_S = 300
KEY = RSAKey.generate_key(2048, auto_kid=True)
STATS = {"exchanges": 0}


class Client(ClientMixin):  # type: ignore[misc]
    def __init__(self, client_id: str, secret: str) -> None:
        self.client_id, self.secret = client_id, secret

    def get_client_id(self) -> str:
        return self.client_id

    def check_client_secret(self, client_secret: str) -> bool:
        return client_secret == self.secret

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == GRANT_TYPE


def sign(claims: dict[str, Any]) -> str:
    return jwt.encode({"alg": "RS256", "kid": KEY.kid, "typ": "at+jwt"}, claims, KEY, algorithms=["RS256"])


class TokenExchangeGrant(BaseGrant, TokenEndpointMixin):  # type: ignore[misc]
    GRANT_TYPE = GRANT_TYPE
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]

    def validate_token_request(self) -> None:
        client = self.authenticate_token_endpoint_client()
        if not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError()
        self.request.client = client
        data = self.request.payload.data
        if data.get("subject_token_type") != ACCESS_TOKEN or not data.get("subject_token"):
            raise InvalidRequestError("subject_token of type access_token is required")
        if not data.get("audience"):
            raise InvalidRequestError("audience is required")
        try:
            subject = jwt.decode(data["subject_token"], KEY, algorithms=["RS256"]).claims
            jwt.JWTClaimsRegistry(exp={"essential": True}, sub={"essential": True}).validate(subject)
        except (JoseError, ValueError) as exc:
            raise InvalidGrantError(f"the subject token is not valid: {type(exc).__name__}") from None
        self.subject = subject
        self.actor = None
        if data.get("actor_token"):
            if data.get("actor_token_type") != ACCESS_TOKEN:
                raise InvalidRequestError("actor_token_type must be access_token")
            try:
                self.actor = jwt.decode(data["actor_token"], KEY, algorithms=["RS256"]).claims
            except (JoseError, ValueError) as exc:
                raise InvalidGrantError(f"the actor token is not valid: {type(exc).__name__}") from None

    def _act(self) -> dict[str, Any]:
        """The authenticated client acts; with an actor token, its agent (`agent_id`) acts through it."""
        client = {"sub": self.request.client.client_id}
        if self.actor is None:
            return client
        return {"sub": f"agent:{self.actor.get('agent_id', self.actor['sub'])}", "act": client}

    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        data = self.request.payload.data
        held = set(str(self.subject.get("scope", "")).split())
        asked = set(str(data.get("scope") or "").split()) or held
        now = int(time.time())
        expires = min(now + EXCHANGED_TTL_S, int(self.subject["exp"]))
        claims = {
            "iss": ISSUER[0],
            "sub": self.subject["sub"],
            "aud": data["audience"],
            "act": self._act(),
            "scope": " ".join(sorted(asked & held)),
            "iat": now,
            "exp": expires,
            "jti": uuid.uuid4().hex,
        }
        STATS["exchanges"] += 1
        token = {
            "access_token": sign(claims),
            "issued_token_type": ACCESS_TOKEN,
            "token_type": "Bearer",
            "expires_in": expires - now,
            "scope": claims["scope"],
        }
        return 200, token, [("Content-Type", "application/json"), ("Cache-Control", "no-store")]


ISSUER = [""]


def build(clients: dict[str, Client]) -> Flask:
    app = Flask(__name__)
    server = AuthorizationServer(app, query_client=clients.get, save_token=lambda token, request: None)
    server.register_grant(TokenExchangeGrant)

    @app.post("/token")
    def token() -> Any:
        return server.create_token_response()

    @app.get("/jwks")
    def jwks() -> Any:
        return jsonify({"keys": [KEY.as_dict(private=False)]})

    @app.get("/stats")
    def stats() -> Any:
        return jsonify(STATS)

    @app.post("/mint")
    def mint() -> Any:
        body = request.get_json()
        now = int(time.time())
        claims = {"iss": ISSUER[0], "iat": now, "jti": uuid.uuid4().hex, **body["claims"]}
        claims.setdefault("exp", now + int(body.get("ttl_s", 300)))
        return jsonify({"token": sign(claims)})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--client", action="append", default=[], help="client_id:secret (repeatable)")
    args = parser.parse_args()
    ISSUER[0] = f"http://127.0.0.1:{args.port}"
    clients = {}
    for pair in args.client:
        client_id, _, secret = pair.partition(":")
        clients[client_id] = Client(client_id, secret)
    build(clients).run(host="127.0.0.1", port=args.port, threaded=True)


if __name__ == "__main__":
    main()
