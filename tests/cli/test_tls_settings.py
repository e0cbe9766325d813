"""`server.tls`: every unusable setting is named with its file and what to do, before serving.

Real files: certificates of a private CA, an encrypted key, a key of another certificate, files
that are not PEM. And `colonnade serve` with a missing certificate stops with that line, no
traceback.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from joserfc.jwk import ECKey
from typer.testing import CliRunner

from colonnade.cli import app
from colonnade.cli._tls import server_ssl_context, uvicorn_tls_options
from colonnade.config import ConfigError, TlsSettings, load_settings
from colonnade.surfaces.edge_auth import client_certificate
from tests.support.certificates import PrivateCa
from tests.support.loopback import free_port

COLONNADE = Path(sys.executable).with_name("colonnade")


def _problem(tls: TlsSettings) -> str:
    with pytest.raises(ConfigError) as raised:
        server_ssl_context(tls)
    assert len(raised.value.problems) >= 1
    return "\n".join(raised.value.problems)


def test_a_good_server_identity_with_required_client_certs(tmp_path: Path) -> None:
    ca = PrivateCa(tmp_path)
    server = ca.server()
    tls = TlsSettings(
        cert_file=server.cert_file,
        key_file=server.key_file,
        client_ca_file=ca.cert_file,
        client_cert="required",
    )
    context = server_ssl_context(tls)
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.minimum_version is ssl.TLSVersion.TLSv1_2
    options = uvicorn_tls_options(tls)
    assert options["ssl_certfile"] == str(server.cert_file)
    assert options["ssl_cert_reqs"] == ssl.CERT_REQUIRED
    assert uvicorn_tls_options(TlsSettings()) == {}


def test_missing_files_are_named(tmp_path: Path) -> None:
    problem = _problem(
        TlsSettings(
            cert_file=tmp_path / "nope.pem", key_file=tmp_path / "nope.key", client_ca_file=tmp_path / "ca"
        )
    )
    for name in ("cert_file", "key_file", "client_ca_file"):
        assert f"server.tls.{name}: {tmp_path}" in problem
    assert "no such file" in problem


def test_a_file_that_is_not_a_certificate(tmp_path: Path) -> None:
    server = PrivateCa(tmp_path).server()
    problem = _problem(TlsSettings(cert_file=server.key_file, key_file=server.key_file))
    assert problem.startswith("server.tls.cert_file:") and "not a PEM certificate" in problem


def test_a_key_of_another_certificate(tmp_path: Path) -> None:
    ca = PrivateCa(tmp_path)
    server, other = ca.server(), ca.client("other")
    problem = _problem(TlsSettings(cert_file=server.cert_file, key_file=other.key_file))
    assert problem.startswith("server.tls.key_file:") and "is not the key of" in problem


def test_an_unreadable_key(tmp_path: Path) -> None:
    server = PrivateCa(tmp_path).server()
    garbage = tmp_path / "garbage.key"
    garbage.write_text("not a key\n")
    problem = _problem(TlsSettings(cert_file=server.cert_file, key_file=garbage))
    assert problem.startswith("server.tls.key_file:") and "no usable PEM private key" in problem


def test_an_encrypted_key_is_refused_without_a_prompt(tmp_path: Path) -> None:
    server = PrivateCa(tmp_path).server()
    key = serialization.load_pem_private_key(server.key_file.read_bytes(), password=None)
    encrypted = tmp_path / "encrypted.key"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    problem = _problem(TlsSettings(cert_file=server.cert_file, key_file=encrypted))
    assert "the private key is encrypted" in problem


def test_a_ca_file_without_certificates(tmp_path: Path) -> None:
    server = PrivateCa(tmp_path).server()
    problem = _problem(
        TlsSettings(
            cert_file=server.cert_file,
            key_file=server.key_file,
            client_ca_file=server.key_file,
            client_cert="optional",
        )
    )
    assert problem.startswith("server.tls.client_ca_file:") and "no PEM CA certificate" in problem


def test_settings_that_contradict_each_other(tmp_path: Path) -> None:
    config = tmp_path / "colonnade.yaml"
    config.write_text("server:\n  tls:\n    cert_file: server.pem\n    client_cert: required\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(config, environ={})
    assert "server.tls" in raised.value.problems[0] and "needs client_ca_file" in raised.value.problems[0]
    with pytest.raises(ConfigError) as raised:
        load_settings(None, environ={"COLONNADE_SERVER__TLS__CLIENT_CERT": "optional"})
    assert "set cert_file" in raised.value.problems[0]


def test_tls_settings_make_the_urls_https(tmp_path: Path) -> None:
    settings = load_settings(None, environ={"COLONNADE_SERVER__TLS__CERT_FILE": "server.pem"})
    assert settings.server.mcp_url == "https://127.0.0.1:8765/mcp"


def test_serve_with_a_missing_certificate_stops_with_its_setting(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLONNADE_")}
    env.update(
        COLONNADE_DATA_DIR=str(tmp_path / "data"), COLONNADE_SERVER__TLS__CERT_FILE=str(tmp_path / "x.pem")
    )
    run = subprocess.run(
        [str(COLONNADE), "serve", "--port", str(free_port())],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert f"server.tls.cert_file: {tmp_path / 'x.pem'}: no such file" in run.stderr


def test_the_client_certificate_of_a_standard_tls_extension(tmp_path: Path) -> None:
    client = PrivateCa(tmp_path).client("alice")
    chain = [client.cert_file.read_text()]
    assert client_certificate({"extensions": {"tls": {"client_cert_chain": chain}}}) == client.thumbprint
    assert (
        client_certificate({"extensions": {"tls": {"x5t#S256": "abc", "client_cert_chain": chain}}}) == "abc"
    )
    assert client_certificate({"extensions": {"tls": {"client_cert_chain": []}}}) is None
    assert client_certificate({"type": "http"}) is None


def test_token_mint_binds_to_a_certificate_and_a_key(tmp_path: Path) -> None:
    alice = PrivateCa(tmp_path).client("alice")
    key = ECKey.generate_key("P-256", auto_kid=True)
    jwk = tmp_path / "key.jwk"
    jwk.write_text(json.dumps(key.as_dict(private=False)))
    env = {"COLONNADE_DATA_DIR": str(tmp_path / "data")}
    args = ["token", "mint", "--sub", "alice", "--tenant", "acme", "--cert-file", str(alice.cert_file)]
    minted = CliRunner().invoke(app, [*args, "--dpop-key", str(jwk)], env=env)
    assert minted.exit_code == 0, minted.output
    payload = minted.output.strip().split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["cnf"] == {"x5t#S256": alice.thumbprint, "jkt": key.thumbprint()}
    refused = CliRunner().invoke(app, [*args[:-1], str(alice.key_file)], env=env)
    assert refused.exit_code == 2 and "cannot read the PEM certificate" in refused.output
