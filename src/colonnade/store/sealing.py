"""Sealing: what the gateway keeps at rest encrypted (refresh tokens, stored secrets), AES-256-GCM.

A sealed value names the key that sealed it (`v1.<kid>.<nonce+ciphertext>`), so keys can rotate:
new values are sealed with the current key, older ones still open with theirs until re-sealed.
The context (what the value is and whose) is bound as associated data, so a sealed value copied
into another row or tenant does not open there. The key ring lives in `data_dir/seal-keys.json`,
readable by its owner only, unless the composition root hands one in from elsewhere.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from colonnade.errors import ColonnadeError

__all__ = ["KEY_RING_FILE", "SealError", "Sealer", "sealer_for", "write_key_ring"]

KEY_RING_FILE = "seal-keys.json"
_VERSION = "v1"
_NONCE_BYTES = 12
_KEY_BYTES = 32


class SealError(ColonnadeError):
    """A sealed value could not be opened: unknown key, wrong context, or tampered bytes."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Sealer:
    """Seals with `current`; opens with any key of `keys` (kid -> 32-byte key)."""

    keys: Mapping[str, bytes]
    current: str
    _ciphers: dict[str, AESGCM] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.current not in self.keys:
            raise SealError(f"the current sealing key {self.current!r} is not in the key ring")
        for kid, key in self.keys.items():
            if len(key) != _KEY_BYTES:
                raise SealError(f"sealing key {kid!r} has {len(key)} bytes; AES-256-GCM needs {_KEY_BYTES}")
            if "." in kid or not kid:
                raise SealError(f"sealing key id {kid!r} must be non-empty and hold no '.'")

    @classmethod
    def generate(cls) -> Sealer:
        kid = secrets.token_hex(4)
        return cls({kid: AESGCM.generate_key(bit_length=256)}, kid)

    @classmethod
    def load_or_create(cls, data_dir: Path) -> Sealer:
        """The data directory's key ring, created (owner-only) on first use."""
        path = data_dir / KEY_RING_FILE
        if path.exists():
            return cls.from_json(path.read_text(encoding="utf-8"), where=str(path))
        sealer = cls.generate()
        data_dir.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process (or part of this one) made it first: use that ring
            return cls.from_json(path.read_text(encoding="utf-8"), where=str(path))
        with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
            sink.write(sealer.to_json())
        return sealer

    @classmethod
    def from_json(cls, text: str, *, where: str = "the key ring") -> Sealer:
        try:
            data = json.loads(text)
            keys = {str(kid): _unb64(str(key)) for kid, key in data["keys"].items()}
            return cls(keys, str(data["current"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SealError(
                f"{where} is not a sealing key ring ({exc}); expected "
                '{"current": "<kid>", "keys": {"<kid>": "<base64url 32 bytes>"}}'
            ) from exc

    def rotated(self) -> Sealer:
        """A ring with a new current key; the older keys stay, so everything sealed before still opens."""
        kid = secrets.token_hex(4)
        while kid in self.keys:
            kid = secrets.token_hex(4)
        return Sealer({**self.keys, kid: AESGCM.generate_key(bit_length=256)}, kid)

    def to_json(self) -> str:
        return json.dumps(
            {"current": self.current, "keys": {kid: _b64(key) for kid, key in self.keys.items()}}
        )

    def _cipher(self, kid: str) -> AESGCM:
        cipher = self._ciphers.get(kid)
        if cipher is None:
            cipher = self._ciphers[kid] = AESGCM(bytes(self.keys[kid]))
        return cipher

    def seal(self, plaintext: bytes, *, context: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._cipher(self.current).encrypt(nonce, plaintext, context.encode("utf-8"))
        return f"{_VERSION}.{self.current}.{_b64(nonce + sealed)}"

    def open(self, token: str, *, context: str) -> bytes:
        version, _, rest = token.partition(".")
        kid, _, body = rest.partition(".")
        if version != _VERSION or not body:
            raise SealError("not a sealed value (expected v1.<kid>.<data>)")
        if kid not in self.keys:
            raise SealError(f"sealed with key {kid!r}, which this key ring no longer holds")
        raw = _unb64(body)
        try:
            return self._cipher(kid).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], context.encode("utf-8"))
        except InvalidTag as exc:
            raise SealError("the sealed value does not open here (another context, or altered)") from exc

    def key_id(self, token: str) -> str:
        """Which key sealed `token` (to find what a rotation must re-seal)."""
        return token.split(".", 2)[1] if token.count(".") >= 2 else ""


def write_key_ring(path: Path, sealer: Sealer) -> None:
    """Replace the ring at `path` in one step (owner-only), so a reader sees the old ring or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
        sink.write(sealer.to_json())
    os.replace(staging, path)


def sealer_for(
    data_dir: Path,
    *,
    key_ring_file: Path | None = None,
    key_ring_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Sealer:
    """The gateway's key ring: from an environment variable (a KMS or secret manager fills it), a
    file (one mounted for every replica), else the data directory's, made on first use."""
    if key_ring_env:
        text = (os.environ if environ is None else environ).get(key_ring_env, "").strip()
        if not text:
            raise SealError(
                f"vault.key_ring_env names {key_ring_env}, which is not set; put the key ring there "
                "(`colonnade secrets key-ring new` prints one) or drop the setting"
            )
        return Sealer.from_json(text, where=f"the environment variable {key_ring_env}")
    if key_ring_file is not None:
        try:
            text = key_ring_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SealError(
                f"vault.key_ring_file {key_ring_file} does not exist; create it with "
                f"`colonnade secrets key-ring new > {key_ring_file}` (mode 600) or drop the setting"
            ) from None
        except OSError as exc:
            raise SealError(f"vault.key_ring_file {key_ring_file} cannot be read: {exc.strerror}") from None
        return Sealer.from_json(text, where=str(key_ring_file))
    return Sealer.load_or_create(data_dir)
