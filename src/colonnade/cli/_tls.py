"""Serving https: the server's `SSLContext` from `server.tls`, checked before anything starts.

Every problem is named with its setting and file (missing, unreadable, not PEM, an encrypted key,
a key that is not the certificate's, a CA file without certificates), so a misconfigured gateway
stops with one clear line instead of uvicorn's OpenSSL traceback, and never sits at a password
prompt for an encrypted key. Client certificates are asked for as `client_cert` says and
verified against `client_ca_file`.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path
from typing import Any

from colonnade.config import ConfigError, TlsSettings

__all__ = ["server_ssl_context", "uvicorn_tls_options"]

_VERIFY = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_PEM_CERTIFICATE = "-----BEGIN CERTIFICATE-----"


class _EncryptedKey(Exception):
    """Raised from the password callback: the gateway takes no key password."""


def server_ssl_context(tls: TlsSettings) -> ssl.SSLContext:
    """The context uvicorn serves with; raises `ConfigError` naming the setting at fault."""
    assert tls.cert_file is not None
    problems = [_unusable(name, path) for name, path in _files(tls)]
    if any(problems):
        raise ConfigError([problem for problem in problems if problem])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_identity(context, tls.cert_file, tls.key_file)
    context.verify_mode = _VERIFY[tls.client_cert]
    if tls.client_ca_file is not None:
        try:
            context.load_verify_locations(cafile=str(tls.client_ca_file))
        except ssl.SSLError as exc:
            raise ConfigError(
                [
                    f"server.tls.client_ca_file: {tls.client_ca_file}: no PEM CA certificate in it "
                    f"({exc.reason})"
                ]
            ) from None
    return context


def uvicorn_tls_options(tls: TlsSettings) -> dict[str, Any]:
    """`uvicorn.Config` arguments: the settings as uvicorn knows them, served with the checked context."""
    if not tls.enabled:
        return {}
    context = server_ssl_context(tls)
    return {
        "ssl_certfile": str(tls.cert_file),
        "ssl_keyfile": str(tls.key_file) if tls.key_file is not None else None,
        "ssl_ca_certs": str(tls.client_ca_file) if tls.client_ca_file is not None else None,
        "ssl_cert_reqs": int(context.verify_mode),
        "ssl_context_factory": lambda _config, _default: context,
    }


def _files(tls: TlsSettings) -> list[tuple[str, Path]]:
    named = (("cert_file", tls.cert_file), ("key_file", tls.key_file), ("client_ca_file", tls.client_ca_file))
    return [(name, path) for name, path in named if path is not None]


def _unusable(name: str, path: Path) -> str | None:
    if not path.is_file():
        return f"server.tls.{name}: {path}: no such file (give the path of a PEM file)"
    if not os.access(path, os.R_OK):
        return f"server.tls.{name}: {path}: not readable by this user (check its permissions)"
    return None


def _load_identity(context: ssl.SSLContext, cert_file: Path, key_file: Path | None) -> None:
    if _PEM_CERTIFICATE not in cert_file.read_text(encoding="ascii", errors="replace"):
        raise ConfigError(
            [f"server.tls.cert_file: {cert_file}: not a PEM certificate (-----BEGIN CERTIFICATE-----)"]
        )
    where = (
        f"server.tls.key_file: {key_file}" if key_file is not None else f"server.tls.cert_file: {cert_file}"
    )

    def no_password() -> str:
        raise _EncryptedKey

    try:
        context.load_cert_chain(str(cert_file), str(key_file) if key_file is not None else None, no_password)
    except _EncryptedKey:
        raise ConfigError(
            [
                f"{where}: the private key is encrypted; give it unencrypted (e.g. `openssl pkey -in KEY "
                "-out PLAIN`), readable by the gateway's user only"
            ]
        ) from None
    except ssl.SSLError as exc:
        if exc.reason == "KEY_VALUES_MISMATCH":
            raise ConfigError([f"{where}: the private key is not the key of {cert_file}"]) from None
        raise ConfigError([f"{where}: no usable PEM private key in it ({exc.reason or exc})"]) from None
