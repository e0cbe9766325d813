"""Verify OAuth access tokens (JWTs) against the trusted issuers, with joserfc.

In this order, each with its own code: the token parses; its issuer is trusted; its algorithm is
one that issuer uses (never `none`, never one the issuer was not configured for, so a public key
can never be used as an HMAC secret); the key it names is the issuer's; the signature verifies;
`iss`, `aud` (the gateway's resource URL), `exp`, `nbf` and `iat` hold, with a small leeway.

A verified token is remembered (keyed by its exact text) until it expires or for at most
`remember_s`, so a client reusing its token does not pay for a signature check on every request;
expiry is checked again on every use.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from joserfc import jws
from joserfc.errors import (
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwt import JWTClaimsRegistry

from colonnade.governance.identity.failures import AuthFailure, invalid
from colonnade.governance.identity.issuer_keys import IssuerKeys, KeysUnavailable

__all__ = ["TokenVerifier", "TrustedIssuer", "VerifiedToken", "looks_like_jwt"]

_ACCESS_TOKEN_TYPES = (None, "JWT", "at+jwt", "application/at+jwt")
_REMEMBERED = 10_000


@dataclass(frozen=True, slots=True)
class TrustedIssuer:
    issuer: str
    keys: IssuerKeys
    algorithms: frozenset[str]
    audience: str


@dataclass(frozen=True, slots=True)
class VerifiedToken:
    issuer: str
    claims: Mapping[str, Any]


def looks_like_jwt(credential: str) -> bool:
    return credential.count(".") == 2


class TokenVerifier:
    def __init__(
        self,
        issuers: Sequence[TrustedIssuer],
        *,
        leeway_s: int = 30,
        remember_s: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuers = {trusted.issuer: trusted for trusted in issuers}
        self.leeway_s = leeway_s
        self.remember_s = remember_s
        self._clock = clock
        self._verified: OrderedDict[str, tuple[VerifiedToken, float, float]] = OrderedDict()

    async def verify(self, token: str) -> VerifiedToken | AuthFailure:
        now = self._clock()
        remembered = self._verified.get(token)
        if remembered is not None:
            verified, expires, until = remembered
            if now < until:
                if expires <= now - self.leeway_s:
                    return invalid("A-AUTH-EXPIRED", "the token has expired")
                return verified
            del self._verified[token]
        outcome = await self._verify(token, now)
        if isinstance(outcome, VerifiedToken):
            expires = float(outcome.claims["exp"])
            self._verified[token] = (outcome, expires, now + self.remember_s)
            if len(self._verified) > _REMEMBERED:
                self._verified.popitem(last=False)
        return outcome

    async def _verify(self, token: str, now: float) -> VerifiedToken | AuthFailure:
        try:
            compact = jws.extract_compact(token.encode("ascii"))
            header = compact.headers()
            payload = _claims(compact.payload)
        except (JoseError, ValueError, UnicodeError, TypeError):
            return invalid("A-AUTH-MALFORMED", "the bearer token is not a well-formed JWT")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg.lower() == "none":
            return invalid("A-AUTH-ALGORITHM", "unsigned tokens (alg none) are never accepted")
        if header.get("typ") not in _ACCESS_TOKEN_TYPES:
            kind = header.get("typ")
            return invalid("A-AUTH-MALFORMED", f"a token of type {kind!r} is not an access token")
        issuer = payload.get("iss")
        trusted = self.issuers.get(issuer) if isinstance(issuer, str) else None
        if trusted is None:
            return invalid("A-AUTH-ISSUER", "the token's issuer is not trusted by this gateway")
        if alg not in trusted.algorithms:
            return invalid("A-AUTH-ALGORITHM", f"the issuer's tokens are not signed with {alg!r} here")
        kid = header.get("kid")
        try:
            key = await trusted.keys.key_for(kid if isinstance(kid, str) else None, alg)
        except KeysUnavailable:
            return AuthFailure(
                "A-AUTH-JWKS-UNAVAILABLE", "the issuer's signing keys cannot be fetched", 503, None
            )
        if key is None:
            return invalid("A-AUTH-SIGNING-KEY", "the token names a key its issuer does not publish")
        try:
            valid = jws.validate_compact(compact, key, algorithms=[alg])
        except JoseError:
            valid = False
        if not valid:
            return invalid("A-AUTH-SIGNATURE", "the token's signature does not verify")
        return self._checked(trusted, payload, now)

    def _checked(
        self, trusted: TrustedIssuer, claims: dict[str, Any], now: float
    ) -> VerifiedToken | AuthFailure:
        registry = JWTClaimsRegistry(
            now=int(now),
            leeway=self.leeway_s,
            iss={"essential": True, "value": trusted.issuer},
            sub={"essential": True},
            exp={"essential": True},
            aud={"essential": True, "value": trusted.audience},
        )
        try:
            registry.validate(claims)
        except ExpiredTokenError:
            return invalid("A-AUTH-EXPIRED", "the token has expired")
        except MissingClaimError as exc:
            return invalid("A-AUTH-CLAIMS", f"the token lacks the claim(s) {exc.claim}")
        except InvalidClaimError as exc:
            if exc.claim == "aud":
                return invalid("A-AUTH-AUDIENCE", "the token was issued for another resource (aud)")
            if exc.claim in ("nbf", "iat"):
                return invalid("A-AUTH-NOT-YET-VALID", f"the token is not valid yet ({exc.claim})")
            return invalid("A-AUTH-CLAIMS", f"the token's {exc.claim} claim is malformed")
        return VerifiedToken(trusted.issuer, claims)


def _claims(payload: bytes | None) -> dict[str, Any]:
    claims = json.loads(payload or b"")
    if not isinstance(claims, dict):
        raise ValueError("the JWT payload is not an object")
    return claims
