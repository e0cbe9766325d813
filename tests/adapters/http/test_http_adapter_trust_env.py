"""https backends, and what `trust_env` changes: proxy variables and SSL_CERT_FILE count only with it.

uvicorn serves the adapter suite's backend over TLS with a certificate made for the test run.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http.session import tls_context
from colonnade.adapters.outcome import MISCONFIGURED, AdapterOutcome, OutcomeKind
from colonnade.catalog.http_binding import HttpBinding, ParamLocation, ParamSpec
from tests.adapters.conftest import Run, backend_app
from tests.adapters.raw_server import OK, RawServer, reply
from tests.support.loopback import serve_in_thread

ECHO = HttpBinding(
    base_url="http://placeholder",
    method="POST",
    path="/echo/{name}",
    params=(ParamSpec("name", ParamLocation.PATH, "name"), ParamSpec("tls", ParamLocation.BODY, "tls")),
)
BIG = HttpBinding(
    base_url="http://placeholder",
    method="GET",
    path="/big",
    params=tuple(ParamSpec(name, ParamLocation.QUERY, name) for name in ("bytes", "chunked")),
)


def at(binding: HttpBinding, base_url: str) -> HttpBinding:
    fields = {name: getattr(binding, name) for name in HttpBinding.__dataclass_fields__}
    return HttpBinding(**{**fields, "base_url": base_url})


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost, made for this test run."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "colonnade test backend")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    paths = Certificate(folder / "cert.pem", folder / "key.pem")
    paths.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture(scope="module")
def tls_url(certificate: Certificate) -> Iterator[str]:
    """The adapter suite's backend behind uvicorn's TLS on a free loopback port."""
    with serve_in_thread(backend_app(), tls=(certificate.cert, certificate.key)) as url:
        yield url


@pytest.fixture
def env_trusts(monkeypatch: pytest.MonkeyPatch, certificate: Certificate) -> Iterator[None]:
    """SSL_CERT_FILE names the test certificate; the process's TLS contexts are made afresh."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.cert))
    tls_context.cache_clear()
    yield
    tls_context.cache_clear()  # the next test gets contexts made without this variable


def test_untrusted_backend_certificate_is_a_tls_misconfiguration(run: Run[Any], tls_url: str) -> None:
    async def main() -> AdapterOutcome:
        async with HttpAdapter() as adapter:
            return await adapter.execute(at(ECHO, tls_url), {"name": "x"})

    outcome = run(main)

    assert outcome.kind is OutcomeKind.TERMINAL_ERROR
    assert outcome.error_code == MISCONFIGURED
    assert "TLS" in (outcome.message or "")


def test_ssl_cert_file_is_trusted_with_trust_env_only(run: Run[Any], tls_url: str, env_trusts: None) -> None:
    async def main() -> tuple[list[AdapterOutcome], AdapterOutcome, AdapterOutcome]:
        async with HttpAdapter(trust_env=True) as trusting, HttpAdapter() as direct:
            echoed = [await trusting.execute(at(ECHO, tls_url), {"name": n, "tls": True}) for n in "abc"]
            big = await trusting.execute(at(BIG, tls_url), {"bytes": 3_000_000, "chunked": True})
            refused = await direct.execute(at(ECHO, tls_url), {"name": "x"})
        return echoed, big, refused

    echoed, big, refused = run(main)

    assert all(outcome.ok for outcome in echoed), echoed
    assert echoed[0].body["body"] == {"tls": True}
    assert len({outcome.body["client_port"] for outcome in echoed}) == 1  # one kept-alive TLS connection
    assert big.ok and len(big.body) == 3_000_000 // 1024 * 1024
    assert refused.error_code == MISCONFIGURED


def test_proxy_variables_are_honoured_with_trust_env_only(
    run: Run[Any], backend_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `trust_env` the request goes to the proxy in absolute form; without, to the backend."""
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)

    async def main() -> tuple[AdapterOutcome, AdapterOutcome, list[bytes]]:
        async with RawServer(reply(OK)) as proxy:
            monkeypatch.setenv("http_proxy", proxy.url)
            async with HttpAdapter(trust_env=True) as proxied, HttpAdapter() as direct:
                via_proxy = await proxied.execute(at(ECHO, backend_url), {"name": "p"})
                straight = await direct.execute(at(ECHO, backend_url), {"name": "d"})
            return via_proxy, straight, [e.target for e in proxy.exchanges]

    via_proxy, straight, targets = run(main)

    assert via_proxy.body == "ok"  # the proxy's answer
    assert targets == [f"{backend_url}/echo/p".encode()]
    assert straight.ok and straight.body["path"] == "/echo/d"
