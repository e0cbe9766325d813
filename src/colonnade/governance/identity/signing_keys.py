"""The gateway's own signing keys as a ring: one current key signs, the keys it replaced still verify
for an overlap, and the public half of each is published with its key id (JWKS).

Approval tokens and the development issuer keep their ring in one owner-only file each; any
signer of the gateway's (a delegated-token endpoint, say) can keep one the same way. A ring
file is re-read when it changes, so `colonnade keys rotate-signing` reaches running processes
that share the file without a restart. The older format (one private JWK) reads as a ring of one.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet

from colonnade.errors import ColonnadeError

__all__ = ["RingKey", "SigningKeyError", "SigningKeyFile", "SigningKeyRing"]

Clock = Callable[[], float]


class SigningKeyError(ColonnadeError):
    """A signing key file that cannot be read as a key ring."""


@dataclass(frozen=True, slots=True)
class RingKey:
    key: ECKey
    retired_at: float | None = None
    """When a newer key replaced it (epoch seconds); None: the current key."""


def _new_key() -> ECKey:
    return ECKey.generate_key("P-256", auto_kid=True)


@dataclass(frozen=True, slots=True)
class SigningKeyRing:
    """Keys newest first; the first is current. A retired key verifies until `retired_at + overlap_s`."""

    keys: tuple[RingKey, ...]
    overlap_s: float

    def __post_init__(self) -> None:
        if not self.keys or self.keys[0].retired_at is not None:
            raise SigningKeyError("a signing key ring needs a current key first")

    @classmethod
    def generate(cls, *, overlap_s: float) -> SigningKeyRing:
        return cls((RingKey(_new_key()),), overlap_s)

    @property
    def current(self) -> ECKey:
        return self.keys[0].key

    def verifying(self, now: float) -> list[ECKey]:
        """The keys that verify at `now`: the current one and those inside their overlap."""
        return [
            ring_key.key
            for ring_key in self.keys
            if ring_key.retired_at is None or ring_key.retired_at + self.overlap_s > now
        ]

    def key_set(self, now: float) -> KeySet:
        return KeySet(list(self.verifying(now)))

    def public_jwks(self, now: float) -> dict[str, Any]:
        """The JWKS document of the keys that verify now (public halves, each with its `kid`)."""
        return {"keys": [dict(key.as_dict(private=False)) for key in self.verifying(now)]}

    def rotated(self, now: float) -> SigningKeyRing:
        """A new current key; the old current one retires now; keys past their overlap are dropped."""
        kept = [
            RingKey(ring_key.key, now if ring_key.retired_at is None else ring_key.retired_at)
            for ring_key in self.keys
            if ring_key.retired_at is None or ring_key.retired_at + self.overlap_s > now
        ]
        return SigningKeyRing((RingKey(_new_key()), *kept), self.overlap_s)

    def to_json(self) -> str:
        return json.dumps(
            {
                "keys": [dict(ring_key.key.as_dict(private=True)) for ring_key in self.keys],
                "retired_at": {
                    ring_key.key.kid: ring_key.retired_at for ring_key in self.keys if ring_key.retired_at
                },
            }
        )

    @classmethod
    def from_json(cls, text: str, *, overlap_s: float, where: str = "the signing key file") -> SigningKeyRing:
        try:
            data = json.loads(text)
            if "keys" not in data:  # one private JWK: the format before rings
                return cls((RingKey(ECKey.import_key(data)),), overlap_s)
            retired: dict[str, float] = {str(k): float(v) for k, v in data.get("retired_at", {}).items()}
            keys: Sequence[RingKey] = [
                RingKey(key, retired.get(str(key.kid)))
                for key in (ECKey.import_key(jwk) for jwk in data["keys"])
            ]
            return cls(tuple(keys), overlap_s)
        except (ValueError, KeyError, TypeError, AttributeError, JoseError) as exc:
            raise SigningKeyError(
                f"{where} is not a signing key ring ({type(exc).__name__}: {exc}); move it away and the "
                "gateway makes a new one (tokens it signed stop verifying)"
            ) from None


class SigningKeyFile:
    """A ring kept in `path` (owner-only), made on first use and re-read when another process rotates it."""

    def __init__(self, path: Path, *, overlap_s: float, clock: Clock = time.time) -> None:
        self.path = path
        self.overlap_s = overlap_s
        self.clock = clock
        self._seen: tuple[int, int, int] | None = None
        self._ring = self._load()

    @property
    def ring(self) -> SigningKeyRing:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return self._ring  # removed under a running process: keep signing with what it had
        if _signature(status) != self._seen:
            self._ring = self._load()
        return self._ring

    def rotate(self) -> tuple[SigningKeyRing, SigningKeyRing]:
        """Write a rotated ring; the ring before and after."""
        before = self.ring
        after = before.rotated(self.clock())
        self._write(after, replace=True)
        self._ring = after
        return before, after

    def _load(self) -> SigningKeyRing:
        if not self.path.exists():
            made = SigningKeyRing.generate(overlap_s=self.overlap_s)
            if self._write(made, replace=False):
                return made
        text = self.path.read_text(encoding="utf-8")
        status = self.path.stat()
        self._seen = _signature(status)
        return SigningKeyRing.from_json(text, overlap_s=self.overlap_s, where=str(self.path))

    def _write(self, ring: SigningKeyRing, *, replace: bool) -> bool:
        """Write the ring owner-only; without `replace`, a file another process made first wins (False)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        staging = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}")
        descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
            sink.write(ring.to_json())
        if replace:
            os.replace(staging, self.path)
        else:
            try:
                os.link(staging, self.path)
            except FileExistsError:
                return False
            finally:
                os.unlink(staging)
        status = self.path.stat()
        self._seen = _signature(status)
        return True


def _signature(status: os.stat_result) -> tuple[int, int, int]:
    """What changes when the file is replaced (a rotation writes a new file: a new inode)."""
    return status.st_ino, status.st_mtime_ns, status.st_size
