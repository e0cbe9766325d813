"""DPoP proofs for tests (RFC 9449), signed by a real key, for exactly one request."""

from __future__ import annotations

import time
import uuid
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey

from colonnade.governance.identity.dpop import access_token_hash

__all__ = ["proof"]


def proof(
    key: ECKey,
    method: str,
    url: str,
    token: str,
    *,
    issued_at: float | None = None,
    jti: str | None = None,
    **overrides: Any,
) -> str:
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": dict(key.as_dict(private=False))}
    claims: dict[str, Any] = {
        "jti": jti or uuid.uuid4().hex,
        "htm": method,
        "htu": url,
        "iat": int(issued_at if issued_at is not None else time.time()),
        "ath": access_token_hash(token),
        **overrides,
    }
    return jwt.encode(header, claims, key, algorithms=["ES256"])
