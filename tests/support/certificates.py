"""A private CA for TLS tests: a server certificate for 127.0.0.1/localhost and client certificates.

Real X.509 (the `cryptography` package), written as PEM files the gateway and the clients load;
`thumbprint` is the RFC 8705 `x5t#S256` of a client certificate, what a bound token carries.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from colonnade.governance.identity.certificate_binding import certificate_thumbprint

__all__ = ["Issued", "PrivateCa"]


@dataclass(frozen=True)
class Issued:
    cert_file: Path
    key_file: Path
    thumbprint: str


class PrivateCa:
    """A CA whose certificates and keys are written under `directory`."""

    def __init__(self, directory: Path, name: str = "Colonnade Test CA") -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.name = subject
        self.cert = (
            _builder(subject, subject, self.key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.cert_file = directory / f"{name.replace(' ', '-').lower()}.pem"
        self.cert_file.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def server(self, stem: str = "server") -> Issued:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        return self._issue(stem, "localhost", ExtendedKeyUsageOID.SERVER_AUTH, names)

    def client(self, stem: str) -> Issued:
        return self._issue(stem, stem, ExtendedKeyUsageOID.CLIENT_AUTH, [])

    def client_context(self, client: Issued | None = None) -> ssl.SSLContext:
        """What a client trusts (this CA) and, when given, the certificate it presents."""
        context = ssl.create_default_context(cafile=str(self.cert_file))
        if client is not None:
            context.load_cert_chain(str(client.cert_file), str(client.key_file))
        return context

    def _issue(
        self, stem: str, common_name: str, usage: x509.ObjectIdentifier, names: list[x509.GeneralName]
    ) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        builder = _builder(subject, self.name, key.public_key()).add_extension(
            x509.ExtendedKeyUsage([usage]), critical=False
        )
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        cert_file, key_file = self.directory / f"{stem}.pem", self.directory / f"{stem}.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return Issued(
            cert_file, key_file, certificate_thumbprint(cert.public_bytes(serialization.Encoding.DER))
        )


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
