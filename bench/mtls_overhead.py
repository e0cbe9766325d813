"""What do client certificates and certificate-bound tokens (RFC 8705) cost the gateway?

Per connection: a TLS handshake on loopback (client and server in this process) without and with a
client certificate, and the ASGI TLS extension the gateway builds once per connection (the
certificate's DER, PEM, subject and `x5t#S256` thumbprint). Per request: reading the thumbprint from
the scope (what the gateway does), against hashing the standard `client_cert_chain` PEM again (what
each request would pay without the per-connection thumbprint); and the authenticator on a
remembered token, unbound and bound to the presented certificate. Each row is the median of several
rounds, in CPU microseconds of this process (and wall-clock microseconds).

Run: .venv/bin/python bench/mtls_overhead.py [--count 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import uvloop
from joserfc import jwt
from joserfc.jwk import ECKey
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import Cost, cost_rounds

from colonnade.cli._tls import server_ssl_context
from colonnade.cli._tls_extension import tls_extension
from colonnade.config import ClaimNames, TlsSettings
from colonnade.governance.identity import Authenticator, RequestFacts
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.claim_mapping import ClaimMapping
from colonnade.governance.identity.issuer_keys import IssuerKeys
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal
from colonnade.surfaces.edge_auth import client_certificate
from tests.support.certificates import PrivateCa


async def _cost_rounds(work: Callable[[int], Awaitable[None]], n: int, rounds: int) -> Cost:
    return await cost_rounds(work, n, rounds, warm_up=200)


ISSUER, AUDIENCE = "https://issuer.bench", "https://127.0.0.1:8443/mcp"


async def _handshakes(
    server: ssl.SSLContext, client: ssl.SSLContext, n: int, rounds: int
) -> tuple[Cost, Any]:
    """Cost of one handshake, and a server-side transport of a finished one (for the extension)."""
    transports: list[asyncio.BaseTransport] = []

    class Accept(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            transports.append(transport)
            transport.close()

    listening = await asyncio.get_running_loop().create_server(Accept, "127.0.0.1", 0, ssl=server)
    port = listening.sockets[0].getsockname()[1]

    async def connect(count: int) -> None:
        for _ in range(count):
            _, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=client, server_hostname="localhost"
            )
            writer.close()
            await writer.wait_closed()

    cost = await _cost_rounds(connect, n, rounds)
    listening.close()
    return cost, transports[-1]


async def main(count: int, rounds: int) -> None:
    ca = PrivateCa(Path(tempfile.mkdtemp(prefix="mtls-bench-")))
    identity, alice = ca.server(), ca.client("alice")
    tls = TlsSettings(cert_file=identity.cert_file, key_file=identity.key_file)
    server = server_ssl_context(
        tls.model_copy(update={"client_ca_file": ca.cert_file, "client_cert": "optional"})
    )
    results: dict[str, Cost] = {}
    handshakes = max(count // 10, 50)
    results["TLS handshake, no client certificate"], _ = await _handshakes(
        server, ca.client_context(), handshakes, rounds
    )
    results["TLS handshake, with a client certificate"], transport = await _handshakes(
        server, ca.client_context(alice), handshakes, rounds
    )

    async def extension(n: int) -> None:
        for _ in range(n):
            tls_extension(transport)

    results["the connection's TLS extension (once per connection)"] = await _cost_rounds(
        extension, count, rounds
    )
    built = tls_extension(transport)
    assert built is not None and built["x5t#S256"] == alice.thumbprint
    scope = {"extensions": {"tls": built}}
    standard = {"extensions": {"tls": {"client_cert_chain": built["client_cert_chain"]}}}
    for name, lookup in (
        ("thumbprint from the scope (per request)", scope),
        ("PEM hashed per request", standard),
    ):

        async def read(n: int, looked: dict[str, Any] = lookup) -> None:
            for _ in range(n):
                assert client_certificate(looked) == alice.thumbprint

        results[name] = await _cost_rounds(read, count, rounds)
    key = ECKey.generate_key("P-256", auto_kid=True)
    issuer = TrustedIssuer(
        ISSUER, IssuerKeys(keys=[dict(key.as_dict(private=False))]), frozenset({"ES256"}), AUDIENCE
    )
    authenticator = Authenticator(ClaimMapping(ClaimNames(), AgentBook()), tokens=TokenVerifier([issuer]))
    for name, cnf in (
        ("unbound token", None),
        ("token bound to the certificate", {"x5t#S256": alice.thumbprint}),
    ):
        facts = RequestFacts(
            "POST", AUDIENCE, "/mcp", authorization=f"Bearer {_token(key, cnf)}", client_cert=alice.thumbprint
        )

        async def authenticate(n: int, request: RequestFacts = facts) -> None:
            for _ in range(n):
                assert isinstance(await authenticator.authenticate(request), Principal)

        results[f"authenticate a remembered {name}"] = await _cost_rounds(authenticate, count, rounds)
    table = Table(title=f"mTLS costs ({count} per round, median of {rounds} rounds)")
    for column in ("what", "CPU us", "wall us"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for name, (cpu, wall) in results.items():
        table.add_row(name, f"{cpu:.1f}", f"{wall:.1f}")
    Console().print(table)


def _token(key: ECKey, cnf: dict[str, str] | None) -> str:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "persona": "admin", "tenant": "acme",
        "scope": " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN])), "iat": now, "exp": now + 3600,
    }  # fmt: skip
    if cnf is not None:
        claims["cnf"] = cnf
    return jwt.encode({"alg": "ES256", "kid": key.kid}, claims, key, algorithms=["ES256"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    uvloop.run(main(args.count, args.rounds))
