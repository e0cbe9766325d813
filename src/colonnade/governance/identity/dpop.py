"""DPoP (RFC 9449): a token bound to a key (`cnf.jkt`) is only good with a proof signed by that key.

The proof is a JWT of type `dpop+jwt` carrying its public key; it must be signed with an
asymmetric algorithm by that key, whose thumbprint is the token's `cnf.jkt`, and name exactly
this request: `htm` the method, `htu` the URL without query or fragment, `ath` the hash of the
access token, an `iat` within the freshness window, and a `jti` never seen before by any replica
(the replay cache lives in the store). A stolen token is useless without the key; a stolen proof
is useless for another request and cannot be replayed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, JWKRegistry, Key, OKPKey, RSAKey

from colonnade.governance.identity.failures import AuthFailure, invalid

__all__ = ["DPOP_ALGORITHMS", "DpopVerifier", "FirstUse", "ProofsSeen", "access_token_hash", "normalized_url"]

DPOP_ALGORITHMS = ("ES256", "ES384", "RS256", "PS256", "Ed25519")
FirstUse = Callable[[str, datetime], Awaitable[bool]]
"""(proof id, remember until) -> True when the proof had not been seen before."""
_KEY_TYPES: tuple[type[Key], ...] = (ECKey, RSAKey, OKPKey)
_SWEEP_AT_LEAST = 10_000


def access_token_hash(token: str) -> str:
    digest = hashlib.sha256(token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def normalized_url(url: str) -> str:
    """The URL as `htu` compares it: scheme and host in lower case, no query, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", "", ""))


class DpopVerifier:
    def __init__(
        self, first_use: FirstUse, *, window_s: int = 60, clock: Callable[[], float] = time.time
    ) -> None:
        self.first_use = first_use
        self.window_s = window_s
        self._clock = clock

    async def check(
        self, proof: str | None, *, token: str, thumbprint: str, method: str, url: str
    ) -> AuthFailure | None:
        """None when `proof` proves possession of the token's key for this request."""
        if not proof:
            return invalid("A-AUTH-DPOP-REQUIRED", "the token is bound to a key; send it with a DPoP proof")
        parsed = _verified(proof)
        if isinstance(parsed, AuthFailure):
            return parsed
        key, claims = parsed
        problem = self._mismatch(claims, key, token, thumbprint, method, url)
        if problem is not None:
            return invalid("A-AUTH-DPOP-INVALID", problem)
        proof_id = hashlib.sha256(f"{thumbprint}:{claims['jti']}".encode()).hexdigest()
        keep_until = datetime.fromtimestamp(float(claims["iat"]), UTC) + timedelta(seconds=2 * self.window_s)
        if not await self.first_use(proof_id, keep_until):
            return invalid("A-AUTH-DPOP-REPLAY", "this DPoP proof was used before")
        return None

    def _mismatch(
        self, claims: dict[str, Any], key: Key, token: str, thumbprint: str, method: str, url: str
    ) -> str | None:
        jti, issued = claims.get("jti"), claims.get("iat")
        if not isinstance(jti, str) or not 8 <= len(jti) <= 256:
            return "the proof needs a jti (a unique id of at least 8 characters)"
        if not isinstance(issued, int | float) or isinstance(issued, bool):
            return "the proof needs an iat"
        if abs(self._clock() - float(issued)) > self.window_s:
            return f"the proof's iat is more than {self.window_s} s from now"
        if claims.get("htm") != method:
            return f"the proof is for another method (htm), not {method}"
        if not isinstance(claims.get("htu"), str) or normalized_url(claims["htu"]) != normalized_url(url):
            return "the proof is for another URL (htu)"
        if claims.get("ath") != access_token_hash(token):
            return "the proof is for another access token (ath)"
        if key.thumbprint() != thumbprint:
            return "the proof's key is not the key the token is bound to (cnf.jkt)"
        return None


def _verified(proof: str) -> tuple[Key, dict[str, Any]] | AuthFailure:
    try:
        compact = jws.extract_compact(proof.encode("ascii"))
        header = compact.headers()
        alg, jwk = header.get("alg"), header.get("jwk")
        if header.get("typ") != "dpop+jwt" or alg not in DPOP_ALGORITHMS or not isinstance(jwk, dict):
            return invalid("A-AUTH-DPOP-INVALID", "the proof needs typ dpop+jwt, an asymmetric alg and a jwk")
        if "d" in jwk or jwk.get("kty") not in ("EC", "RSA", "OKP"):
            return invalid("A-AUTH-DPOP-INVALID", "the proof's jwk must be a public asymmetric key")
        key = JWKRegistry.import_key(jwk)
        if not isinstance(key, _KEY_TYPES) or not jws.validate_compact(compact, key, algorithms=[alg]):
            return invalid("A-AUTH-DPOP-INVALID", "the proof's signature does not verify with its jwk")
        claims = json.loads(compact.payload or b"")
    except (JoseError, ValueError, UnicodeError, TypeError):
        return invalid("A-AUTH-DPOP-INVALID", "the DPoP proof is not a well-formed signed JWT")
    if not isinstance(claims, dict):
        return invalid("A-AUTH-DPOP-INVALID", "the DPoP proof's payload is not an object")
    return key, claims


class ProofsSeen:
    """A replay cache in memory, for a gateway without a database (one process, so nothing to share).

    Expired entries are swept when the cache has doubled since the last sweep (at least 10,000), so
    a window holding many live proofs costs each new proof O(1) on average, not a sweep per proof.
    """

    def __init__(self) -> None:
        self._seen: dict[str, datetime] = {}
        self._sweep_at = _SWEEP_AT_LEAST

    async def __call__(self, proof: str, keep_until: datetime) -> bool:
        now = datetime.now(UTC)
        if len(self._seen) > self._sweep_at:
            self._seen = {seen: until for seen, until in self._seen.items() if until > now}
            self._sweep_at = max(_SWEEP_AT_LEAST, 2 * len(self._seen))
        if proof in self._seen and self._seen[proof] > now:
            return False
        self._seen[proof] = keep_until
        return True
