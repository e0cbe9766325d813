"""Identity: who calls. OAuth access tokens (JWT, JWKS), API keys, agents, DPoP, the dev issuer, and
delegation (the gateway's own RFC 8693 token exchange, `delegation.py`).

The HTTP edge hands each request's credential to `Authenticator`, which answers with a
`Principal` or an `AuthFailure` carrying an `A-AUTH-*` code; stdio runs as the configured local
principal and never reaches it.
"""

from colonnade.governance.identity.authenticator import Authenticator, RequestFacts, RouteScopes
from colonnade.governance.identity.failures import AuthFailure

__all__ = ["AuthFailure", "Authenticator", "RequestFacts", "RouteScopes"]
