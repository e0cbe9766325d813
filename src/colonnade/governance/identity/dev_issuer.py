"""The development issuer: a signing key under `data_dir`, for the demo and tests, never production.

`colonnade demo` turns it on and mints an admin token with it; `colonnade token mint` mints any
other token. The gateway trusts it only when `auth.dev_issuer` is set: its public key is then
an issuer like any other (`iss` = `colonnade-dev`), verified on the same road as real tokens.
The private key file is created readable by its owner only and holds a ring
(`signing_keys.py`): `colonnade keys rotate-signing --dev-issuer` adds a new key, the old one still
verifies for the overlap, and the gateway reads the ring's public keys (JWKS) as they change.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey

from colonnade.governance.identity.signing_keys import SigningKeyFile

__all__ = ["DEV_ALGORITHM", "DEV_ISSUER", "KEY_FILE", "DevIssuer"]

DEV_ISSUER = "colonnade-dev"
DEV_ALGORITHM = "ES256"
KEY_FILE = "dev-issuer.jwk"


class DevIssuer:
    def __init__(self, keys: SigningKeyFile, *, clock: Callable[[], float] = time.time) -> None:
        self.keys = keys
        self.clock = clock

    @classmethod
    def load_or_create(cls, data_dir: Path, *, overlap_s: float = 86_400.0) -> DevIssuer:
        return cls(SigningKeyFile(data_dir / KEY_FILE, overlap_s=overlap_s))

    @property
    def key(self) -> ECKey:
        """The key that signs now."""
        return self.keys.ring.current

    def public_jwks(self) -> list[dict[str, Any]]:
        """The public keys that verify now (the current one and those inside their overlap)."""
        keys: list[dict[str, Any]] = self.keys.ring.public_jwks(self.clock())["keys"]
        return keys

    def mint(self, claims: Mapping[str, Any], *, audience: str, ttl_s: int, now: float | None = None) -> str:
        """A signed access token for `audience` living `ttl_s` seconds (claims may override any field)."""
        issued = int(now if now is not None else time.time())
        payload = {
            "iss": DEV_ISSUER,
            "aud": audience,
            "iat": issued,
            "nbf": issued,
            "exp": issued + ttl_s,
            "jti": uuid.uuid4().hex,
            **claims,
        }
        key = self.key
        header = {"alg": DEV_ALGORITHM, "kid": key.kid, "typ": "at+jwt"}
        return jwt.encode(header, payload, key, algorithms=[DEV_ALGORITHM])
