"""Who is calling: the credential of one HTTP request becomes a `Principal`, or a refusal.

Credentials travel in `Authorization`: `Bearer <JWT>` (an OAuth access token from a trusted
issuer), `DPoP <JWT>` with a `DPoP` proof header (a token bound to a key), or `Bearer col_...`
(an API key; `X-API-Key: col_...` is accepted too). A request without one is refused. A token
bound to a client certificate (`cnf.x5t#S256`, RFC 8705) is accepted only on a TLS connection
presenting that certificate (`RequestFacts.client_cert`, its thumbprint). After the
caller is known, the route's scope (e.g. `colonnade:metrics:read` for /metrics) is checked. A token
of the gateway's own delegation issuer is read as a delegation chain (`delegated_tokens.py`).
Every refusal is an audit record (`auth.failure`) before it is answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from colonnade.governance.audit import AuditEvent, AuditLog, AuditUnavailable, EventKind
from colonnade.governance.identity.api_keys import ApiKeys, is_api_key, parse_key
from colonnade.governance.identity.certificate_binding import certificate_mismatch
from colonnade.governance.identity.claim_mapping import ClaimMapping
from colonnade.governance.identity.confirmation import confirmation
from colonnade.governance.identity.delegated_tokens import DelegatedTokens
from colonnade.governance.identity.dpop import DpopVerifier
from colonnade.governance.identity.failures import AuthFailure, insufficient_scope, invalid
from colonnade.governance.identity.tokens import TokenVerifier, VerifiedToken, looks_like_jwt
from colonnade.governance.principal import CallerToken, Principal

__all__ = ["Authenticator", "RequestFacts", "RouteScopes"]

RouteScopes = Sequence[tuple[str, str]]
"""(path prefix, scope it needs); the longest matching prefix decides."""
_MISSING = AuthFailure("A-AUTH-MISSING", "this request needs a credential", 401, None)


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """What authentication reads of an HTTP request."""

    method: str
    url: str
    path: str
    authorization: str | None = None
    dpop: str | None = None
    api_key: str | None = None
    client_cert: str | None = None
    """The `x5t#S256` thumbprint of the connection's verified client certificate, if any."""


class Authenticator:
    def __init__(
        self,
        claims: ClaimMapping,
        *,
        tokens: TokenVerifier | None = None,
        api_keys: ApiKeys | None = None,
        dpop: DpopVerifier | None = None,
        route_scopes: RouteScopes = (),
        audit: AuditLog | None = None,
        delegated: DelegatedTokens | None = None,
    ) -> None:
        self.claims = claims
        self.delegated = delegated
        self.tokens = tokens
        self.api_keys = api_keys
        self.dpop = dpop
        self.route_scopes = sorted(route_scopes, key=lambda entry: -len(entry[0]))
        self.audit = audit

    async def authenticate(self, facts: RequestFacts) -> Principal | AuthFailure:
        outcome = await self._identify(facts)
        if isinstance(outcome, Principal):
            outcome = self._route_allows(outcome, facts.path)
        if isinstance(outcome, AuthFailure) and self.audit is not None:
            await self._record(outcome, facts)
        return outcome

    async def _identify(self, facts: RequestFacts) -> Principal | AuthFailure:
        scheme, credential = _credential(facts)
        if credential is None:
            return _MISSING if scheme is None else invalid("A-AUTH-MALFORMED", "the credential is empty")
        if is_api_key(credential):
            if scheme == "dpop":
                return invalid("A-AUTH-MALFORMED", "an API key is sent as a Bearer credential, not DPoP")
            if self.api_keys is None:
                return invalid("A-AUTH-API-KEY", "this gateway does not accept API keys")
            return await self.api_keys.authenticate(credential)
        if scheme not in ("bearer", "dpop") or not looks_like_jwt(credential):
            return invalid("A-AUTH-MALFORMED", _unreadable(scheme, credential))
        if self.tokens is None:
            return invalid("A-AUTH-ISSUER", "this gateway trusts no token issuer")
        verified = await self.tokens.verify(credential)
        if isinstance(verified, AuthFailure):
            return verified
        bound = confirmation(verified.claims)
        if bound.certificate is not None:
            refused = certificate_mismatch(bound.certificate, facts.client_cert)
            if refused is not None:
                return refused
        thumbprint = bound.key
        if thumbprint is not None:
            if scheme != "dpop" or self.dpop is None:
                return invalid(
                    "A-AUTH-DPOP-REQUIRED", "a key-bound token is sent as `DPoP <token>` with a proof"
                )
            refused = await self.dpop.check(
                facts.dpop, token=credential, thumbprint=thumbprint, method=facts.method, url=facts.url
            )
            if refused is not None:
                return refused
        elif scheme == "dpop":
            return invalid("A-AUTH-DPOP-INVALID", "the token is not bound to a key (no cnf.jkt)")
        principal = self._principal(verified)
        if isinstance(principal, AuthFailure):
            return principal
        return replace(principal, caller_token=caller_token(credential, verified))

    def _principal(self, verified: VerifiedToken) -> Principal | AuthFailure:
        credential = f"jwt:{verified.issuer}"
        if self.delegated is not None and verified.issuer == self.delegated.issuer:
            return self.delegated.principal(verified.claims, credential)
        return self.claims.principal(verified.claims, credential)

    def _route_allows(self, principal: Principal, path: str) -> Principal | AuthFailure:
        for prefix, scope in self.route_scopes:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                if principal.has(scope):
                    return principal
                return insufficient_scope(f"{path} needs the scope {scope}", scope)
        return principal

    async def _record(self, failure: AuthFailure, facts: RequestFacts) -> None:
        assert self.audit is not None
        scheme, credential = _credential(facts)
        details: dict[str, object] = {"method": facts.method, "path": facts.path[:200]}
        if scheme is not None:
            details["scheme"] = scheme
        if facts.client_cert is not None:
            details["client_cert"] = facts.client_cert
        parsed = parse_key(credential) if credential is not None else None
        if parsed is not None:
            details["key_id"] = parsed[0]
        event = AuditEvent(
            EventKind.AUTH_FAILURE,
            decision="deny",
            reasons=(failure.message,),
            outcome="refused",
            code=failure.code,
            details=details,
        )
        with contextlib.suppress(AuditUnavailable):  # the request is refused either way
            await self.audit.append(event)


def _unreadable(scheme: str | None, credential: str) -> str:
    """What is wrong with a credential that is neither an API key nor a token, never echoing it."""
    if scheme not in ("bearer", "dpop", "api-key"):
        return (
            f"the Authorization scheme {(scheme or '')[:20]!r} is not accepted: send "
            "`Authorization: Bearer <token>` (a JWT or an API key col_...) or `DPoP <token>`"
        )
    dots = credential.count(".")
    return (
        f"the credential sent ({len(credential)} characters, {dots} dot{'s' if dots != 1 else ''}) is "
        "neither a JWT (three base64url parts joined by two dots) nor an API key (starting col_); "
        "check that the whole token was copied"
    )


def _credential(facts: RequestFacts) -> tuple[str | None, str | None]:
    """(scheme in lower case, credential) of the request; (None, None) when it sends none."""
    if facts.authorization is not None:
        scheme, _, value = facts.authorization.strip().partition(" ")
        return scheme.lower(), value.strip() or None
    if facts.api_key is not None:
        return "api-key", facts.api_key.strip() or None
    return None, None


def caller_token(token: str, verified: VerifiedToken) -> CallerToken:
    """What upstream credentials need of a verified token (its `aud` may be a string or a list)."""
    claims = verified.claims
    audience = claims.get("aud")
    audiences = frozenset([audience] if isinstance(audience, str) else audience or ())
    return CallerToken(token, verified.issuer, str(claims["sub"]), audiences, float(claims["exp"]))
