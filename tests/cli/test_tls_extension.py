"""The ASGI TLS extension a TLS connection gets: read from a real handshake on loopback.

With a client certificate it carries the certificate (PEM), its subject (RFC 4514) and its
`x5t#S256` thumbprint; without one, an empty chain; plain TCP gets no extension. Both event
loops the gateway may run on (asyncio, uvloop) are checked.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvloop

from colonnade.cli._tls import server_ssl_context
from colonnade.cli._tls_extension import tls_extension
from colonnade.config import TlsSettings
from tests.support.certificates import Issued, PrivateCa

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
LOOPS: dict[str, Runner] = {"asyncio": asyncio.run, "uvloop": uvloop.run}


async def _extension_seen(
    server_context: ssl.SSLContext | None, client_context: ssl.SSLContext | None
) -> Any:
    """The extension the server side computes for one connection."""
    seen: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            if not seen.done():
                seen.set_result(tls_extension(transport))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Probe, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    try:
        _, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_context, server_hostname="localhost" if client_context else None
        )
        result = await asyncio.wait_for(seen, 10)
        writer.close()
        return result
    finally:
        server.close()


def _contexts(tmp: Path, client: bool) -> tuple[ssl.SSLContext, ssl.SSLContext, Issued]:
    ca = PrivateCa(tmp)
    server, alice = ca.server(), ca.client("alice")
    tls = TlsSettings(
        cert_file=server.cert_file,
        key_file=server.key_file,
        client_ca_file=ca.cert_file,
        client_cert="optional",
    )
    return server_ssl_context(tls), ca.client_context(alice if client else None), alice


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_a_client_certificate_reaches_the_extension(tmp_path: Path, loop: str) -> None:
    server, client, alice = _contexts(tmp_path, client=True)
    extension = LOOPS[loop](_extension_seen(server, client))
    assert extension["x5t#S256"] == alice.thumbprint
    assert extension["client_cert_name"] == "CN=alice"
    assert ssl.PEM_cert_to_DER_cert(extension["client_cert_chain"][0]) == ssl.PEM_cert_to_DER_cert(
        alice.cert_file.read_text()
    )
    assert extension["tls_version"] in (0x0303, 0x0304)


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_without_a_client_certificate_the_chain_is_empty(tmp_path: Path, loop: str) -> None:
    server, client, _ = _contexts(tmp_path, client=False)
    extension = LOOPS[loop](_extension_seen(server, client))
    assert extension["client_cert_chain"] == [] and "x5t#S256" not in extension
    assert extension["client_cert_name"] is None


def test_plain_tcp_has_no_extension() -> None:
    assert asyncio.run(_extension_seen(None, None)) is None
