"""Certificate-bound tokens (RFC 8705): a token with `cnf.x5t#S256` is only good over mTLS.

The claim is the SHA-256 thumbprint (base64url, unpadded) of the DER client certificate the
token was issued to. The gateway accepts such a token only on a TLS connection whose client
certificate has that thumbprint, so a stolen token is useless without the certificate's key. A
token without the claim is unaffected; a token bound both to a key (`cnf.jkt`, DPoP) and to a
certificate must satisfy both.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from colonnade.governance.identity.confirmation import X5T_S256
from colonnade.governance.identity.failures import AuthFailure, invalid

__all__ = ["X5T_S256", "certificate_mismatch", "certificate_thumbprint"]


def certificate_thumbprint(der: bytes) -> str:
    """The RFC 8705 `x5t#S256` of a DER certificate."""
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode("ascii")


def certificate_mismatch(bound: object, presented: str | None) -> AuthFailure | None:
    """None when the connection's client certificate (`presented` thumbprint) is the bound one."""
    if presented is None:
        return invalid(
            "A-AUTH-MTLS-REQUIRED",
            "the token is bound to a client certificate (cnf.x5t#S256); this connection presented none",
        )
    if not isinstance(bound, str) or not hmac.compare_digest(bound.encode(), presented.encode()):
        return invalid(
            "A-AUTH-MTLS-MISMATCH",
            "the connection's client certificate is not the one the token is bound to (cnf.x5t#S256)",
        )
    return None
