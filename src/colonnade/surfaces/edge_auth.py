"""The HTTP edge's authenticator once authentication is configured: governance's, in edge terms.

The edge hands over the request's headers and ASGI scope; the governance `Authenticator`
decides; a refusal becomes an `EdgeRefusal` with its `A-AUTH-*` code, its status (401, or 403
for a missing scope) and the `WWW-Authenticate` challenge that points clients at the protected
resource metadata (RFC 9728), as the MCP authorization spec asks.

The connection's client certificate arrives in the ASGI TLS extension
(`scope["extensions"]["tls"]`): the gateway's own server puts its `x5t#S256` thumbprint there
once per connection; from another ASGI server, the standard `client_cert_chain` is hashed.
"""

from __future__ import annotations

import ssl

from starlette.datastructures import Headers
from starlette.types import Scope

from colonnade.governance.identity import Authenticator, RequestFacts
from colonnade.governance.identity.certificate_binding import X5T_S256, certificate_thumbprint
from colonnade.governance.identity.resource_metadata import challenge
from colonnade.governance.principal import Principal
from colonnade.surfaces.edge import Authenticator as EdgeAuthenticator
from colonnade.surfaces.edge import EdgeRefusal

__all__ = ["client_certificate", "edge_authenticator", "request_url"]


def request_url(headers: Headers, scope: Scope) -> str:
    """The URL the client addressed (what a DPoP proof's `htu` names): scheme, Host, path."""
    host = headers.get("host", "")
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}{scope['path']}"


def client_certificate(scope: Scope) -> str | None:
    """The `x5t#S256` thumbprint of the connection's client certificate, or None without one."""
    tls = (scope.get("extensions") or {}).get("tls")
    if not isinstance(tls, dict):
        return None
    thumbprint = tls.get(X5T_S256)
    if isinstance(thumbprint, str):
        return thumbprint
    chain = tls.get("client_cert_chain")
    if not chain or not isinstance(chain[0], str):
        return None
    try:
        return certificate_thumbprint(ssl.PEM_cert_to_DER_cert(chain[0]))
    except ValueError:
        return None


def edge_authenticator(authenticator: Authenticator, resource: str) -> EdgeAuthenticator:
    async def authenticate(headers: Headers, scope: Scope) -> Principal | EdgeRefusal:
        facts = RequestFacts(
            method=str(scope.get("method", "GET")),
            url=request_url(headers, scope),
            path=scope["path"],
            authorization=headers.get("authorization"),
            dpop=headers.get("dpop"),
            api_key=headers.get("x-api-key"),
            client_cert=client_certificate(scope),
        )
        outcome = await authenticator.authenticate(facts)
        if isinstance(outcome, Principal):
            return outcome
        return EdgeRefusal(
            outcome.code,
            outcome.message,
            outcome.status,
            dict(outcome.details),
            headers=challenge(outcome, resource),
        )

    return authenticate
