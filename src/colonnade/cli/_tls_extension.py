"""The ASGI TLS extension of one connection: what the app learns of its TLS session.

uvicorn does not fill `scope["extensions"]["tls"]`, so the gateway's protocol does, once per
connection (after the handshake, when the peer certificate is known) and hands the same mapping
to every request on it. Besides the standard keys, `x5t#S256` carries the client certificate's
SHA-256 thumbprint, which certificate-bound tokens (RFC 8705) are checked against without
hashing the certificate on every request.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from colonnade.governance.identity.certificate_binding import X5T_S256, certificate_thumbprint

__all__ = ["tls_extension"]

_TLS_VERSIONS = {"TLSv1.2": 0x0303, "TLSv1.3": 0x0304}
_SHORT_NAMES = {
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "stateOrProvinceName": "ST",
    "localityName": "L",
    "domainComponent": "DC",
}


def tls_extension(transport: asyncio.BaseTransport) -> dict[str, Any] | None:
    """The extension for a TLS connection, or None for plain http."""
    ssl_object = transport.get_extra_info("ssl_object")
    if not isinstance(ssl_object, ssl.SSLObject | ssl.SSLSocket):
        return None
    extension: dict[str, Any] = {
        "server_cert": None,
        "client_cert_chain": [],
        "client_cert_name": None,
        "client_cert_error": None,
        "tls_version": _TLS_VERSIONS.get(ssl_object.version() or ""),
        "cipher_suite": None,
    }
    der = ssl_object.getpeercert(binary_form=True)
    if der:
        extension["client_cert_chain"] = [ssl.DER_cert_to_PEM_cert(der)]
        extension["client_cert_name"] = _subject_name(ssl_object.getpeercert())
        extension[X5T_S256] = certificate_thumbprint(der)
    return extension


def _subject_name(decoded: dict[str, Any] | None) -> str | None:
    """The certificate's subject as RFC 4514 writes it (most specific first)."""
    if not decoded or not decoded.get("subject"):
        return None
    parts = [
        "+".join(f"{_SHORT_NAMES.get(key, key)}={_escaped(value)}" for key, value in rdn)
        for rdn in reversed(decoded["subject"])
    ]
    return ",".join(parts)


def _escaped(value: str) -> str:
    escaped = "".join(f"\\{char}" if char in ',+"\\<>;' else char for char in value)
    if escaped.startswith(("#", " ")):
        escaped = "\\" + escaped
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped
