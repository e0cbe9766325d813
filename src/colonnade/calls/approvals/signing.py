"""Approval tokens: a JWS (ES256, `joserfc`) binding one approval to exactly one call.

The claims name the approval (`jti`), the tool's canonical name and contract version, the SHA-256
of the canonical JSON arguments, the tenant, the requester, the approver, the policy version and
an expiry of at most 5 minutes. The signing keys are a ring in one file (default `data_dir/
approval-signing.jwk`, made once, readable by its owner only; every replica must share it): the
current key signs, a rotated-out key still verifies for the overlap (`colonnade keys rotate-signing`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from colonnade.governance.identity.signing_keys import SigningKeyFile, SigningKeyRing

__all__ = ["ALGORITHM", "ISSUER", "KEY_FILE", "MAX_TTL_S", "ApprovalClaims", "ApprovalSigner", "BadToken"]

ALGORITHM = "ES256"
ISSUER = "colonnade-approvals"
KEY_FILE = "approval-signing.jwk"
MAX_TTL_S = 300
_TYPE = "colonnade-approval+jwt"


class BadToken(Exception):
    """A token that does not parse or whose signature does not verify with this gateway's key."""


@dataclass(frozen=True, slots=True)
class ApprovalClaims:
    approval_id: str
    tool: str
    version: str
    args_sha256: str
    tenant: str
    requester: str
    approver: str
    policy_version: str | None
    issued_at: int
    expires_at: int

    def as_payload(self) -> dict[str, Any]:
        return {
            "iss": ISSUER,
            "jti": self.approval_id,
            "tool": self.tool,
            "ver": self.version,
            "args": self.args_sha256,
            "tenant": self.tenant,
            "sub": self.requester,
            "apr": self.approver,
            "pol": self.policy_version,
            "iat": self.issued_at,
            "exp": self.expires_at,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> ApprovalClaims:
        try:
            return cls(
                approval_id=str(payload["jti"]),
                tool=str(payload["tool"]),
                version=str(payload["ver"]),
                args_sha256=str(payload["args"]),
                tenant=str(payload["tenant"]),
                requester=str(payload["sub"]),
                approver=str(payload["apr"]),
                policy_version=payload.get("pol"),
                issued_at=int(payload["iat"]),
                expires_at=int(payload["exp"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BadToken(f"the token lacks the claim {exc}") from None


class ApprovalSigner:
    """Signs with the ring's current key; verifies with every key inside its overlap."""

    def __init__(
        self, keys: SigningKeyFile | SigningKeyRing, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._keys = keys
        self.clock = clock

    @classmethod
    def load_or_create(cls, path: Path, *, overlap_s: float = 86_400.0) -> ApprovalSigner:
        """The ring in `path`, made (owner-readable only) when missing; a concurrent maker wins."""
        return cls(SigningKeyFile(path, overlap_s=overlap_s))

    @property
    def ring(self) -> SigningKeyRing:
        return self._keys.ring if isinstance(self._keys, SigningKeyFile) else self._keys

    @property
    def keys_file(self) -> SigningKeyFile:
        """Where the ring is kept (to rotate it); a signer over a bare ring has none."""
        if not isinstance(self._keys, SigningKeyFile):
            raise TypeError("this approval signer holds a ring in memory, not a key file")
        return self._keys

    @property
    def key(self) -> ECKey:
        """The key that signs now."""
        return self.ring.current

    def public_jwks(self) -> dict[str, Any]:
        return self.ring.public_jwks(self.clock())

    def sign(self, claims: ApprovalClaims) -> str:
        key = self.key
        header = {"alg": ALGORITHM, "kid": key.kid, "typ": _TYPE}
        return jwt.encode(header, claims.as_payload(), key, algorithms=[ALGORITHM])

    def verify(self, token: str) -> ApprovalClaims:
        """The claims of a token this gateway signed; expiry is the caller's check (it needs the claims)."""
        try:
            decoded = jwt.decode(token, self.ring.key_set(self.clock()), algorithms=[ALGORITHM])
        except (JoseError, ValueError) as exc:
            raise BadToken(f"not an approval token of this gateway ({type(exc).__name__})") from None
        if decoded.header.get("typ") != _TYPE or decoded.claims.get("iss") != ISSUER:
            raise BadToken("not an approval token of this gateway")
        return ApprovalClaims.from_payload(dict(decoded.claims))


def now_s() -> int:
    return int(time.time())
