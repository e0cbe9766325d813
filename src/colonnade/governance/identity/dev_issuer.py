"""The development issuer: a signing key under `data_dir`, for the demo and tests, never production.

`colonnade demo` turns it on and mints an admin token with it; `colonnade token mint` mints any
other token. The gateway trusts it only when `auth.dev_issuer` is set: its public key is then
an issuer like any other (`iss` = `colonnade-dev`), verified on the same road as real tokens.
The private key file is created readable by its owner only.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey

__all__ = ["DEV_ALGORITHM", "DEV_ISSUER", "KEY_FILE", "DevIssuer"]

DEV_ISSUER = "colonnade-dev"
DEV_ALGORITHM = "ES256"
KEY_FILE = "dev-issuer.jwk"


class DevIssuer:
    def __init__(self, key: ECKey) -> None:
        self.key = key

    @classmethod
    def load_or_create(cls, data_dir: Path) -> DevIssuer:
        path = data_dir / KEY_FILE
        if path.exists():
            return cls(ECKey.import_key(json.loads(path.read_text(encoding="utf-8"))))
        key = ECKey.generate_key("P-256", auto_kid=True)
        data_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
            json.dump(key.as_dict(private=True), sink)
        return cls(key)

    def public_jwks(self) -> list[dict[str, Any]]:
        return [dict(self.key.as_dict(private=False))]

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
        header = {"alg": DEV_ALGORITHM, "kid": self.key.kid, "typ": "at+jwt"}
        return jwt.encode(header, payload, self.key, algorithms=[DEV_ALGORITHM])
