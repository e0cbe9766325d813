"""The key that signs delegated tokens, and the public half the gateway's own verifier trusts.

One ES256 key in a file under `data_dir` (or `auth.delegation.key_file`), made on first use and
readable by its owner only; every replica must be given the same file. Kept in this one module
so the key can later come from a rotating key ring without touching the exchange.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey

__all__ = ["DELEGATION_ALGORITHM", "KEY_FILE", "DelegationSigner"]

DELEGATION_ALGORITHM = "ES256"
KEY_FILE = "delegation-signing.jwk"


class DelegationSigner:
    def __init__(self, key: ECKey) -> None:
        self.key = key

    @classmethod
    def load_or_create(cls, path: Path) -> DelegationSigner:
        if path.exists():
            return cls(ECKey.import_key(json.loads(path.read_text(encoding="utf-8"))))
        key = ECKey.generate_key("P-256", auto_kid=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
            json.dump(key.as_dict(private=True), sink)
        return cls(key)

    @property
    def kid(self) -> str:
        kid = self.key.kid
        assert kid is not None  # generated with auto_kid
        return kid

    def public_jwks(self) -> list[dict[str, Any]]:
        public = dict(self.key.as_dict(private=False))
        return [{**public, "use": "sig", "alg": DELEGATION_ALGORITHM}]

    def sign(self, claims: Mapping[str, Any]) -> str:
        header = {"alg": DELEGATION_ALGORITHM, "kid": self.kid, "typ": "at+jwt"}
        return jwt.encode(header, dict(claims), self.key, algorithms=[DELEGATION_ALGORITHM])
