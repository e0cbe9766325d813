"""A token's confirmation claim (`cnf`, RFC 7800), read in one place and fail-closed.

`cnf` says what a token is bound to: a key (`jkt`, RFC 9449 DPoP) or a client certificate
(`x5t#S256`, RFC 8705 mTLS). A malformed binding must never read as "not bound", or a stolen
token would work without its key: a `cnf` that is not an object, or a `jkt` that is not a
non-empty string, binds the token to no key at all (`""`, which no proof matches); an
`x5t#S256` of the wrong type is kept as given, and no certificate matches it. `cnf: null`
means absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["X5T_S256", "Confirmation", "confirmation"]

X5T_S256 = "x5t#S256"


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What a token is bound to. `key`: the `jkt` thumbprint, `""` when malformed, None when unbound;
    `certificate`: the `x5t#S256` as the token states it (any type), None when unbound."""

    key: str | None = None
    certificate: object | None = None


_UNBOUND = Confirmation()


def confirmation(claims: Mapping[str, Any]) -> Confirmation:
    """The bindings a verified token's claims state."""
    cnf = claims.get("cnf")
    if cnf is None:  # absent, or JSON null
        return _UNBOUND
    if not isinstance(cnf, Mapping):
        return Confirmation(key="")
    key: str | None = None
    if "jkt" in cnf:
        jkt = cnf["jkt"]
        key = jkt if isinstance(jkt, str) and jkt else ""
    return Confirmation(key=key, certificate=cnf.get(X5T_S256))
