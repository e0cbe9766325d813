"""What does delegation cost? The token exchange at issue time, and a delegated token on every call.

In process, without HTTP: the governance `Authenticator` of a gateway with delegation on (an issuer
of the person's tokens, the delegation issuer, three registered agents with keys, an in-memory
DPoP replay cache). A call's authentication is measured for a plain agent token and for delegated
tokens of depth 1 and 3, each with a fresh DPoP proof per call (proofs are made before the clock
starts, as a client makes them); the token itself is remembered after its first check, as a client
reuses it. Claims -> principal isolates what delegation adds to a call (the chain's checks) from
the DPoP proof's signature check that dominates both. The exchange is `TokenExchange.exchange`:
subject token (remembered), the actor token's signature, narrowing, signing the new token. CPU
microseconds of this process per operation, the median of the rounds.

Run: .venv/bin/python bench/delegation_overhead.py [--calls 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from joserfc import jwt
from joserfc.jwk import ECKey
from rich.console import Console
from rich.table import Table

from colonnade.config import ClaimNames, DelegationSettings
from colonnade.governance.identity import Authenticator, RequestFacts
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.claim_mapping import ClaimMapping
from colonnade.governance.identity.delegated_tokens import DelegatedTokens
from colonnade.governance.identity.delegation import (
    ACCESS_TOKEN_TYPE,
    JWT_TOKEN_TYPE,
    TOKEN_EXCHANGE,
    ExchangeRequest,
    IssuedToken,
    TokenExchange,
)
from colonnade.governance.identity.delegation_actor import ActorTokens
from colonnade.governance.identity.delegation_signing import DelegationSigner
from colonnade.governance.identity.dpop import DpopVerifier, ProofsSeen, access_token_hash
from colonnade.governance.identity.issuer_keys import IssuerKeys
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer
from colonnade.governance.principal import Principal
from colonnade.store.agents_repo import AgentRecord

PERSON_ISSUER = "https://idp.bench.example"
ORIGIN = "http://127.0.0.1:8765"
RESOURCE = f"{ORIGIN}/mcp"
CALL_URL = f"{ORIGIN}/v1/calls"
TOKEN_URL = f"{ORIGIN}/oauth/token"
AGENTS = ("planner", "researcher", "writer")


def _proof(key: ECKey, url: str, token: str) -> str:
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": dict(key.as_dict(private=False))}
    claims = {"jti": uuid.uuid4().hex, "htm": "POST", "htu": url, "iat": int(time.time())}
    claims["ath"] = access_token_hash(token)
    return jwt.encode(header, claims, key, algorithms=["ES256"])


def _actor(key: ECKey, agent: str) -> str:
    now = int(time.time())
    claims = {"iss": agent, "sub": agent, "aud": TOKEN_URL, "iat": now, "exp": now + 120}
    return jwt.encode({"alg": "ES256"}, {**claims, "jti": uuid.uuid4().hex}, key, algorithms=["ES256"])


class Rig:
    def __init__(self, data_dir: Path) -> None:
        self.person_key = ECKey.generate_key("P-256", auto_kid=True)
        self.keys = {agent: ECKey.generate_key("P-256", auto_kid=True) for agent in AGENTS}
        now = datetime.now(UTC)
        records = [
            AgentRecord(
                agent,
                "acme",
                "user:officer",
                ("acme:items:*",),
                dict(key.as_dict(private=False)),
                key.thumbprint(),
                "bench",
                now,
            )
            for agent, key in self.keys.items()
        ]
        self.agents = AgentBook(records)
        self.signer = DelegationSigner.load_or_create(data_dir / "delegation.jwk")
        person_keys = IssuerKeys(keys=[dict(self.person_key.as_dict(private=False))])
        issuers = [
            TrustedIssuer(PERSON_ISSUER, person_keys, frozenset({"ES256"}), RESOURCE),
            TrustedIssuer(ORIGIN, IssuerKeys(keys=self.signer.public_jwks()), frozenset({"ES256"}), RESOURCE),
        ]
        seen = ProofsSeen()
        self.authenticator = Authenticator(
            ClaimMapping(ClaimNames(), self.agents),
            tokens=TokenVerifier(issuers),
            dpop=DpopVerifier(seen),
            delegated=DelegatedTokens(ORIGIN, self.agents, safe_for_agents=lambda name: True),
        )
        self.exchange = TokenExchange(
            DelegationSettings(enabled=True),
            issuer=ORIGIN,
            audience=RESOURCE,
            signer=self.signer,
            authenticator=self.authenticator,
            actors=ActorTokens(self.agents, seen),
            safe_for_agents=lambda name: True,
        )

    def person_token(self) -> str:
        now = int(time.time())
        claims = {
            "iss": PERSON_ISSUER,
            "aud": RESOURCE,
            "sub": "alice",
            "persona": "product_owner",
            "tenant": "acme",
            "team": "team-a",
            "scope": "colonnade:catalog:read colonnade:catalog:write",
            "iat": now,
            "exp": now + 3600,
        }
        return jwt.encode(
            {"alg": "ES256", "kid": self.person_key.kid}, claims, self.person_key, algorithms=["ES256"]
        )

    def agent_token(self, agent: str) -> str:
        now = int(time.time())
        claims = {
            "iss": PERSON_ISSUER,
            "aud": RESOURCE,
            "sub": agent,
            "agent_id": agent,
            "tenant": "acme",
            "cnf": {"jkt": self.keys[agent].thumbprint()},
            "iat": now,
            "exp": now + 600,
        }
        return jwt.encode(
            {"alg": "ES256", "kid": self.person_key.kid}, claims, self.person_key, algorithms=["ES256"]
        )

    async def delegate(self, subject: str, agent: str, parent: str | None) -> IssuedToken:
        asked = ExchangeRequest(
            TOKEN_EXCHANGE, subject, ACCESS_TOKEN_TYPE, _actor(self.keys[agent], agent), JWT_TOKEN_TYPE
        )
        dpop = _proof(self.keys[parent], TOKEN_URL, subject) if parent is not None else None
        issued = await self.exchange.exchange(
            asked, method="POST", url=TOKEN_URL, path="/oauth/token", dpop=dpop
        )
        assert isinstance(issued, IssuedToken), issued
        return issued

    async def chain(self, depth: int) -> str:
        token, parent = self.person_token(), None
        for agent in AGENTS[:depth]:
            token, parent = (await self.delegate(token, agent, parent)).access_token, agent
        return token


async def _median_us(
    rounds: int, calls: int, prepare: Callable[[], list[object]], run: Callable[[object], Awaitable[None]]
) -> float:
    per_call = []
    for _ in range(rounds):
        inputs = prepare()
        started = time.process_time()
        for item in inputs:
            await run(item)
        per_call.append((time.process_time() - started) / calls * 1e6)
    return statistics.median(per_call)


async def main(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rig = Rig(Path(tmp))
        tokens = {
            "agent token (not delegated)": (rig.agent_token("writer"), "writer"),
            "delegated, depth 1": (await rig.chain(1), "planner"),
            "delegated, depth 3": (await rig.chain(3), "writer"),
        }
        table = Table(title=f"delegation cost ({calls} operations x {rounds} rounds, median round)")
        table.add_column("operation")
        table.add_column("CPU µs / op", justify="right")
        for name, (token, agent) in tokens.items():
            key = rig.keys[agent]

            def proofs(token: str = token, key: ECKey = key) -> list[object]:
                return [_proof(key, CALL_URL, token) for _ in range(calls)]

            async def authenticate(proof: object, token: str = token) -> None:
                facts = RequestFacts(
                    "POST", CALL_URL, "/v1/calls", authorization=f"DPoP {token}", dpop=str(proof)
                )
                assert isinstance(await rig.authenticator.authenticate(facts), Principal)

            table.add_row(
                f"authenticate a call: {name}", f"{await _median_us(rounds, calls, proofs, authenticate):.0f}"
            )
        delegated = rig.authenticator.delegated
        assert delegated is not None
        for name, (token, _agent) in tokens.items():
            claims = dict(
                jwt.decode(token, rig.signer.key if name.startswith("delegated") else rig.person_key).claims
            )
            mapping = (
                delegated.principal if name.startswith("delegated") else rig.authenticator.claims.principal
            )

            def same(claims: dict[str, object] = claims) -> list[object]:
                return [claims] * calls

            async def mapped(item: object, mapping: Callable[..., object] = mapping) -> None:
                assert isinstance(mapping(item, "jwt:bench"), Principal)

            table.add_row(
                f"claims -> principal only: {name}", f"{await _median_us(rounds, calls, same, mapped):.1f}"
            )
        person = rig.person_token()

        def actors() -> list[object]:
            return [_actor(rig.keys["planner"], "planner") for _ in range(calls)]

        async def exchange(actor: object) -> None:
            asked = ExchangeRequest(TOKEN_EXCHANGE, person, ACCESS_TOKEN_TYPE, str(actor), JWT_TOKEN_TYPE)
            issued = await rig.exchange.exchange(
                asked, method="POST", url=TOKEN_URL, path="/oauth/token", dpop=None
            )
            assert isinstance(issued, IssuedToken)

        table.add_row(
            "token exchange: person -> planner", f"{await _median_us(rounds, calls, actors, exchange):.0f}"
        )
        Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.rounds))
