"""What do authentication, authorization and audit add to every call?

Authentication is the edge's `Authenticator` on one request's facts: a bearer JWT of an issuer
whose keys are cached (the same token again, as a client reuses it; or a new token every call, so
every call pays a signature check), or an API key. Authorization is the authorize stage with
`ToolAccess` over a catalog of 1,000 tools (admin, developer and agent principals in turn). Audit is
the audit stage writing one chained record per call to a SQLite file (the embedded default), one
caller at a time and 32 at once (group commit). Every variant runs several rounds; the table shows
the median round's CPU microseconds per call of this process (all threads: the audit writer's
SQLite work included), and wall-clock microseconds. API keys are also measured with their cache
off and on, on SQLite and (with --postgres) PostgreSQL: what one database read per call costs.

Run: .venv/bin/python bench/governance_overhead.py [--calls 5000] [--rounds 7] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import yaml
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _stack import Cost, cost_rounds

from colonnade.calls.call import Call
from colonnade.calls.envelope import CallRequest, CallResult, CallStatus
from colonnade.calls.manifest import Manifests
from colonnade.calls.pipeline import Next, Pipeline, Stage
from colonnade.calls.stages.audit import Audit
from colonnade.calls.stages.authorize import Authorize
from colonnade.catalog.catalog import Catalog
from colonnade.config import ClaimNames
from colonnade.contracts.model import Contract
from colonnade.governance.audit import AuditLog
from colonnade.governance.identity import Authenticator, RequestFacts
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.api_keys import ApiKeys
from colonnade.governance.identity.claim_mapping import ClaimMapping
from colonnade.governance.identity.issuer_keys import IssuerKeys
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer
from colonnade.governance.key_admin import KeyAdmin, KeyRequest
from colonnade.governance.personas import PERSONA_SCOPES, Persona
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.tool_access import ToolAccess
from colonnade.store import create_store_engine, migrate_engine
from colonnade.store.api_keys_repo import ApiKeyStore
from colonnade.store.audit_repo import AuditStore

ROOT = Path(__file__).resolve().parents[1]
ISSUER = "https://idp.bench.example"
AUDIENCE = "http://127.0.0.1:8765/mcp"
TOOL = "acme:api0:get_customer"
"""(CPU, wall-clock) microseconds per call."""


class Answer:
    async def __call__(self, call: Call, next: Next) -> CallResult:
        return call.result(CallStatus.SUCCESS, output={"id": "I-1"})


def _catalog(apis: int = 166) -> Catalog:
    """The demo CRM contract (6 tools) as `apis` APIs of two tenants: about 1,000 tools."""
    crm = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text(encoding="utf-8"))
    catalog = Catalog()
    for n in range(apis):
        changes = {
            "name": f"api{n}",
            "tenant": "acme" if n % 2 == 0 else "globex",
            "owner": "team-a",
            "environment": "dev" if n % 5 == 0 else "prod",
        }
        catalog.publish(Contract.model_validate({**crm, **changes}))
    return catalog


def _principals() -> list[Principal]:
    scopes = PERSONA_SCOPES
    return [
        Principal(PrincipalKind.USER, "alice", tenant="acme", persona="admin", scopes=scopes[Persona.ADMIN]),
        Principal(
            PrincipalKind.USER,
            "dev",
            tenant="acme",
            persona="developer",
            team="team-a",
            scopes=scopes[Persona.DEVELOPER],
        ),
        Principal(
            PrincipalKind.AGENT,
            "bot",
            tenant="acme",
            persona="agent",
            scopes=scopes[Persona.AGENT],
            allowed_tools=("acme:api0:*", "acme:api2:*"),
        ),
    ]




def _authenticator(keys: list[dict[str, object]], api_keys: ApiKeys | None = None) -> Authenticator:
    issuer = TrustedIssuer(ISSUER, IssuerKeys(keys=keys), frozenset({"RS256", "ES256"}), AUDIENCE)
    return Authenticator(
        ClaimMapping(ClaimNames(), AgentBook()),
        tokens=TokenVerifier([issuer]),
        api_keys=api_keys,
        route_scopes=(("/metrics", "colonnade:metrics:read"),),
    )


def _token(key: RSAKey | ECKey, alg: str, n: int = 0) -> str:
    now = int(time.time())
    claims = {
        "iss": ISSUER, "aud": AUDIENCE, "sub": f"alice-{n}", "persona": "admin", "tenant": "acme",
        "scope": " ".join(sorted(PERSONA_SCOPES[Persona.ADMIN])), "iat": now, "exp": now + 3600,
    }  # fmt: skip
    return jwt.encode({"alg": alg, "kid": key.kid}, claims, key, algorithms=[alg])


async def _authentication(n: int, rounds: int, table: Table, database: Path) -> float:
    rsa, ec = RSAKey.generate_key(2048, auto_kid=True), ECKey.generate_key("P-256", auto_kid=True)
    keys = [dict(rsa.as_dict(private=False)), dict(ec.as_dict(private=False))]
    engine = create_store_engine(f"sqlite+aiosqlite:///{database}")
    await migrate_engine(engine)
    api_keys = ApiKeys(ApiKeyStore(engine), cache_s=300.0)
    issued = await KeyAdmin(ApiKeyStore(engine)).create(
        Principal.system("bench"), KeyRequest(owner="ci", persona="admin", tenant="acme")
    )
    authenticator = _authenticator(keys, api_keys)
    results: dict[str, Cost] = {}

    def facts(credential: str) -> RequestFacts:
        return RequestFacts("POST", "http://127.0.0.1:8765/mcp", "/mcp", authorization=f"Bearer {credential}")

    remembered = facts(_token(rsa, "RS256"))

    async def reused(count: int) -> None:
        for _ in range(count):
            assert isinstance(await authenticator.authenticate(remembered), Principal)

    results["JWT, same token again (remembered)"] = await cost_rounds(reused, n, rounds)
    for alg, key in (("RS256", rsa), ("ES256", ec)):
        fresh = [facts(_token(key, alg, i)) for i in range(n + 500)]

        async def every_call_new(count: int, tokens: list[RequestFacts] = fresh) -> None:
            verifier = _authenticator(keys)  # nothing remembered: every token's signature is checked
            for request in tokens[:count]:
                assert isinstance(await verifier.authenticate(request), Principal)

        results[f"JWT, a new {alg} token every call (signature check)"] = await cost_rounds(
            every_call_new, n, rounds
        )
    keyed = facts(issued.token)

    async def api_key(count: int) -> None:
        for _ in range(count):
            assert isinstance(await authenticator.authenticate(keyed), Principal)

    results["API key (checked key cached)"] = await cost_rounds(api_key, n, rounds)
    await api_keys.aclose()
    await engine.dispose()
    for name, (cpu, wall) in results.items():
        table.add_row("authentication", name, f"{cpu:.1f}", f"{wall:.1f}")
    return results["JWT, same token again (remembered)"][0]


async def _api_key_lookups(n: int, rounds: int, table: Table, database_url: str, label: str) -> None:
    """A/B in one run: every call reads its API key from the database, or the checked key is reused."""
    engine = create_store_engine(database_url)
    await migrate_engine(engine)
    store = ApiKeyStore(engine)
    issued = await KeyAdmin(store).create(
        Principal.system("bench"), KeyRequest(owner="ci-lookups", persona="admin", tenant="acme")
    )
    request = RequestFacts(
        "POST", "http://127.0.0.1:8765/mcp", "/mcp", authorization=f"Bearer {issued.token}"
    )
    for name, cache_s in (("read every call (cache off)", 0.0), ("checked key cached 5 s", 5.0)):
        keys = ApiKeys(store, cache_s=cache_s)
        authenticator = Authenticator(ClaimMapping(ClaimNames(), AgentBook()), api_keys=keys)

        async def api_key(count: int, authenticator: Authenticator = authenticator) -> None:
            for _ in range(count):
                assert isinstance(await authenticator.authenticate(request), Principal)

        cpu, wall = await cost_rounds(api_key, n, rounds)
        await keys.aclose()
        table.add_row("authentication", f"API key, {label}, {name}", f"{cpu:.1f}", f"{wall:.1f}")
    await engine.dispose()


async def _pipeline_cost(stages: list[Stage], tool_calls: list[Call], n: int, rounds: int) -> Cost:
    pipeline = Pipeline(stages)

    async def run(count: int) -> None:
        for i in range(count):
            call = tool_calls[i % len(tool_calls)]
            await pipeline.run(Call.start(call.request, call.tool, call.manifest, principal=call.principal))

    return await cost_rounds(run, n, rounds)


async def _concurrent_cost(
    stages: list[Stage], tool_calls: list[Call], n: int, rounds: int, callers: int
) -> Cost:
    pipeline = Pipeline(stages)

    async def run(count: int) -> None:
        async def caller(share: int) -> None:
            for i in range(share):
                call = tool_calls[i % len(tool_calls)]
                await pipeline.run(
                    Call.start(call.request, call.tool, call.manifest, principal=call.principal)
                )

        await asyncio.gather(*(caller(count // callers) for _ in range(callers)))

    return await cost_rounds(run, n - n % callers, rounds)


async def _authorization_and_audit(
    n: int, rounds: int, table: Table, database_url: str, label: str, *, with_authorization: bool
) -> tuple[float, float]:
    catalog = _catalog()
    tool = catalog.get(TOOL)
    assert tool is not None
    manifest = Manifests().for_tool(tool)
    calls = [
        Call.start(CallRequest(tool_id=TOOL, input={"customer_id": "C-1001"}), tool, manifest, principal=p)
        for p in _principals()
    ]
    access = ToolAccess(catalog)
    bare = await _pipeline_cost([Answer()], calls, n, rounds)
    authorized = await _pipeline_cost([Authorize(access), Answer()], calls, n, rounds)
    engine = create_store_engine(database_url)
    await migrate_engine(engine)
    log = AuditLog(AuditStore(engine), b"k" * 32)
    audited = await _pipeline_cost([Audit(log), Authorize(access), Answer()], calls, n, rounds)
    crowd = await _concurrent_cost([Audit(log), Authorize(access), Answer()], calls, n, rounds, 32)
    crowd_bare = await _concurrent_cost([Authorize(access), Answer()], calls, n, rounds, 32)
    await log.store.aclose()
    await engine.dispose()
    authorization = authorized[0] - bare[0]
    audit = audited[0] - authorized[0]
    if with_authorization:
        table.add_row(
            "authorization",
            "ToolAccess.decide, 1,000 tools",
            f"{authorization:.1f}",
            f"{authorized[1] - bare[1]:.1f}",
        )
    table.add_row(
        "audit",
        f"one record per call, {label}, one caller",
        f"{audit:.1f}",
        f"{audited[1] - authorized[1]:.1f}",
    )
    table.add_row(
        "audit", f"one record per call, {label}, 32 callers (group commit)",
        f"{crowd[0] - crowd_bare[0]:.1f}", f"{crowd[1] - crowd_bare[1]:.1f}",
    )  # fmt: skip
    return authorization, audit


async def main(n: int, rounds: int, postgres: str | None) -> None:
    table = Table(title=f"Governance per call, {n} calls x {rounds} rounds (median round)")
    for column in ("part", "variant", "CPU µs/call", "wall µs/call"):
        table.add_column(column, justify="right" if "µs" in column else "left")
    with tempfile.TemporaryDirectory() as tmp:
        authentication = await _authentication(n, rounds, table, Path(tmp) / "keys.db")
        sqlite = f"sqlite+aiosqlite:///{Path(tmp) / 'audit.db'}"
        authorization, audit = await _authorization_and_audit(
            n, rounds, table, sqlite, "SQLite file", with_authorization=True
        )
        await _api_key_lookups(n, rounds, table, f"sqlite+aiosqlite:///{Path(tmp) / 'keys.db'}", "SQLite")
        if postgres:
            await _api_key_lookups(n, rounds, table, postgres, "PostgreSQL")
            await _authorization_and_audit(n, rounds, table, postgres, "PostgreSQL", with_authorization=False)
    total = authentication + authorization + audit
    table.add_row("total", "remembered JWT + authorization + audit (SQLite, one caller)", f"{total:.1f}", "")
    Console().print(table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--postgres",
        help="also measure API key lookups and the audit log on this PostgreSQL URL (an empty database)",
    )
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds, args.postgres))
