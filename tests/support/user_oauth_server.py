"""A real OAuth provider for per-user upstream grants, built on Authlib (Flask): code + PKCE, refresh, revoke.

Run as its own process: `python tests/support/user_oauth_server.py --port N --client ID:SECRET
--redirect URI --audience AUD --access-ttl S`. `GET /authorize` shows a consent form (the person types
whom they are at the upstream and presses Approve, as at a real provider); `POST /authorize` issues a
code bound to the PKCE challenge (S256 required). `/token` exchanges the code (the verifier checked)
and refresh tokens, rotating them (the old one stops working); `/revoke` is RFC 7009. Access tokens
are JWTs for `--audience` (`sub` the upstream user), verifiable with `/jwks`. `/stats` counts the
grants and lists every refresh token issued, so a test can look for them where they must not
be; `POST /config` changes the access token lifetime.
"""

from __future__ import annotations

import argparse
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from flask import Flask, jsonify, request
from joserfc import jwt
from joserfc.jwk import RSAKey

KEY = RSAKey.generate_key(2048, auto_kid=True)
CONFIG: dict[str, Any] = {"issuer": "", "audience": "", "access_ttl_s": 300}
STATS: dict[str, Any] = {"codes": 0, "refreshes": 0, "revoked": 0, "issued_refresh_tokens": []}


@dataclass
class User:
    name: str

    def get_user_id(self) -> str:
        return self.name


class Client(ClientMixin):  # type: ignore[misc]
    def __init__(self, client_id: str, secret: str, redirect_uri: str) -> None:
        self.client_id, self.secret, self.redirect_uri = client_id, secret, redirect_uri

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_allowed_scope(self, scope: str) -> str:
        return scope

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri == self.redirect_uri

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


@dataclass
class Code:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Token:
    client_id: str
    user: str
    scope: str
    refresh_token: str | None
    access_token: str
    revoked: bool = False
    issued_at: float = field(default_factory=time.time)

    def check_client(self, client: Client) -> bool:
        return bool(client.client_id == self.client_id)

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return int(CONFIG["access_ttl_s"])

    def is_expired(self) -> bool:
        return False

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> User:
        return User(self.user)

    def get_client(self) -> str:
        return self.client_id


CODES: dict[str, Code] = {}
TOKENS: dict[str, Token] = {}
"""By refresh token."""


class AuthorizationCode(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]

    def save_authorization_code(self, code: str, request: Any) -> None:
        payload = request.payload
        CODES[code] = Code(
            code,
            request.client.client_id,
            payload.redirect_uri,
            payload.scope or "",
            request.user.name,
            payload.data.get("code_challenge"),
            payload.data.get("code_challenge_method"),
        )

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        found = CODES.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    def delete_authorization_code(self, authorization_code: Code) -> None:
        CODES.pop(authorization_code.code, None)
        STATS["codes"] += 1

    def authenticate_user(self, authorization_code: Code) -> User:
        return User(authorization_code.user)


class RefreshToken(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        found = TOKENS.get(refresh_token)
        return found if found is not None and not found.revoked else None

    def authenticate_user(self, refresh_token: Token) -> User:
        STATS["refreshes"] += 1
        return User(refresh_token.user)

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.revoked = True


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ["client_secret_basic"]

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        return TOKENS.get(token_string)

    def revoke_token(self, token: Token, request: Any) -> None:
        token.revoked = True
        STATS["revoked"] += 1


def access_token(client: Client, grant_type: str, user: User, scope: str) -> str:
    now = int(time.time())
    claims = {
        "iss": CONFIG["issuer"],
        "sub": user.name,
        "aud": CONFIG["audience"],
        "client_id": client.client_id,
        "scope": scope or "",
        "iat": now,
        "exp": now + int(CONFIG["access_ttl_s"]),
        "jti": uuid.uuid4().hex,
    }
    header = {"alg": "RS256", "kid": KEY.kid, "typ": "at+jwt"}
    return jwt.encode(header, claims, KEY, algorithms=["RS256"])


def refresh_token(client: Client, grant_type: str, user: User, scope: str) -> str:
    return "rt-" + secrets.token_urlsafe(32)


def save_token(token: dict[str, Any], request: Any) -> None:
    refresh = token.get("refresh_token")
    if refresh:
        STATS["issued_refresh_tokens"].append(refresh)
        TOKENS[refresh] = Token(
            request.client.client_id,
            request.user.name,
            token.get("scope", ""),
            refresh,
            token["access_token"],
        )


_FORM = """<!DOCTYPE html><html><head><title>Upstream consent</title></head><body>
<h1>Allow the gateway to act as you?</h1>
<form method="post" action="/authorize?{query}">
<label>You are <input id="user" name="user" value=""></label>
<button id="approve" name="decision" value="approve" type="submit">Approve</button>
<button id="deny" name="decision" value="deny" type="submit">Deny</button>
</form></body></html>"""


def build(clients: dict[str, Client]) -> Flask:
    app = Flask(__name__)
    server = AuthorizationServer(app, query_client=clients.get, save_token=save_token)
    server.register_token_generator(
        "default",
        BearerTokenGenerator(access_token, refresh_token, lambda client, grant_type: CONFIG["access_ttl_s"]),
    )
    server.register_grant(AuthorizationCode, [CodeChallenge(required=True)])
    server.register_grant(RefreshToken)
    server.register_endpoint(Revocation)

    @app.get("/authorize")
    def consent() -> Any:
        if request.args.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method S256 is required")
        server.get_consent_grant(end_user=None)
        return _FORM.format(query=request.query_string.decode().replace('"', "%22"))

    @app.post("/authorize")
    def approve() -> Any:
        if request.form.get("decision") != "approve":
            return server.create_authorization_response(grant_user=None)
        return server.create_authorization_response(grant_user=User(request.form.get("user") or "nobody"))

    @app.post("/token")
    def token() -> Any:
        return server.create_token_response()

    @app.post("/revoke")
    def revoke() -> Any:
        return server.create_endpoint_response(Revocation.ENDPOINT_NAME)

    @app.post("/config")
    def configure() -> Any:
        CONFIG["access_ttl_s"] = int(request.get_json()["access_ttl_s"])
        return jsonify(CONFIG)

    @app.get("/jwks")
    def jwks() -> Any:
        return jsonify({"keys": [KEY.as_dict(private=False)]})

    @app.get("/stats")
    def stats() -> Any:
        live = [t for t, record in TOKENS.items() if not record.revoked]
        return jsonify({**STATS, "live_refresh_tokens": live})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--client", required=True, help="client_id:secret")
    parser.add_argument("--redirect", required=True, help="the client's one redirect URI")
    parser.add_argument("--audience", required=True, help="the aud of the access tokens")
    parser.add_argument("--access-ttl", type=int, default=300, help="access token lifetime (s)")
    args = parser.parse_args()
    CONFIG.update(
        issuer=f"http://127.0.0.1:{args.port}", audience=args.audience, access_ttl_s=args.access_ttl
    )
    client_id, _, secret = args.client.partition(":")
    build({client_id: Client(client_id, secret, args.redirect)}).run(
        host="127.0.0.1", port=args.port, threaded=True
    )


if __name__ == "__main__":
    main()
