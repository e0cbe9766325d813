"""The parts that carry a delegation chain, each on its own: a delegated token's claims become the
narrowest principal (and stop doing so when the chain changes), the audit log stores the chain
hash-chained and pseudonymised, and a parked call's snapshot keeps it."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey
from sqlalchemy.ext.asyncio import AsyncEngine

from colonnade.calls.approvals.desk import principal_from, snapshot_of
from colonnade.catalog.catalog import Catalog
from colonnade.config import AuthSettings, ClaimNames, DelegationSettings, IssuerSettings, Settings
from colonnade.governance.audit import AuditEvent, AuditLog, EventKind, verify_chain
from colonnade.governance.identity import Authenticator
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.claim_mapping import ClaimMapping
from colonnade.governance.identity.delegated_tokens import DelegatedTokens, nested_act
from colonnade.governance.identity.delegation import (
    ACCESS_TOKEN_TYPE,
    JWT_TOKEN_TYPE,
    TOKEN_EXCHANGE,
    ExchangeRefusal,
    ExchangeRequest,
    TokenExchange,
)
from colonnade.governance.identity.delegation_actor import ActorTokens
from colonnade.governance.identity.delegation_signing import DelegationSigner
from colonnade.governance.identity.dpop import ProofsSeen
from colonnade.governance.identity.exposure import AuthConfigError
from colonnade.governance.identity.failures import AuthFailure
from colonnade.governance.identity.issuer_keys import IssuerKeys
from colonnade.governance.identity.tokens import TokenVerifier, TrustedIssuer
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.runtime.governance import Governance
from colonnade.store.agents_repo import AgentRecord
from colonnade.store.audit_repo import AuditFilter, AuditStore

ISSUER = "http://127.0.0.1:9"


def _safe(name: str) -> bool:
    """acme:items:read_item is safe for agents, so planner's glob acme:items:* reaches it."""
    return name == "acme:items:read_item"


def _agent(agent_id: str, tools: tuple[str, ...], **fields: Any) -> AgentRecord:
    values: dict[str, Any] = {
        "id": agent_id,
        "tenant": "acme",
        "owner": "user:officer",
        "allowed_tools": tools,
        "public_key": {"kty": "EC"},
        "key_thumbprint": f"jkt-{agent_id}",
        "registered_via": "test",
        "created_at": datetime.now(UTC),
    }
    values.update(fields)
    return AgentRecord(**values)


AGENTS = [_agent("planner", ("acme:items:*",)), _agent("researcher", ("acme:items:read_item",))]


def _claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "alice",
        "colonnade_origin": "user",
        "tenant": "acme",
        "persona": "product_owner",
        "team": "team-a",
        "act": nested_act(("planner", "researcher")),
        "scope": "colonnade:catalog:read colonnade:catalog:write",
        "colonnade_tools": ["acme:items:read_item"],
        "cnf": {"jkt": "jkt-researcher"},
        "iat": now,
        "exp": now + 300,
    }
    claims.update(overrides)
    return claims


def _failure(outcome: Principal | AuthFailure) -> str:
    assert isinstance(outcome, AuthFailure), outcome
    return f"{outcome.code}: {outcome.message}"


def test_a_delegated_token_becomes_the_acting_agent_acting_for_its_person() -> None:
    tokens = DelegatedTokens(ISSUER, AgentBook(AGENTS), max_depth=3, safe_for_agents=_safe)
    principal = tokens.principal(_claims(), f"jwt:{ISSUER}")
    assert isinstance(principal, Principal)
    assert (principal.kind, principal.id, principal.tenant) == (PrincipalKind.AGENT, "researcher", "acme")
    assert principal.actor_chain == ("user:alice", "agent:planner", "agent:researcher")
    assert principal.allowed_tools == ("acme:items:read_item",)
    assert principal.scopes == frozenset({"colonnade:catalog:read"})  # what an agent may use
    person = principal.on_behalf_of
    assert person is not None and person.key == "user:alice" and person.team == "team-a"
    assert "colonnade:catalog:write" in person.scopes  # the person's side keeps its write scope


def test_a_delegated_token_is_refused_once_its_chain_no_longer_holds() -> None:
    book = AgentBook(AGENTS)
    tokens = DelegatedTokens(ISSUER, book, max_depth=2, max_ttl_s=600, safe_for_agents=_safe)
    credential = f"jwt:{ISSUER}"
    assert "not bound" in _failure(tokens.principal(_claims(cnf=None), credential))
    assert "not bound" in _failure(tokens.principal(_claims(cnf={"jkt": "jkt-planner"}), credential))
    deep = _claims(act=nested_act(("planner", "researcher", "planner")))
    assert "at most 2" in _failure(tokens.principal(deep, credential))
    assert "act claim" in _failure(tokens.principal(_claims(act={"sub": ""}), credential))
    unsafe = DelegatedTokens(ISSUER, book)  # read_item unsafe: planner's glob would not reach it
    assert "no longer cover acme:items:read_item" in _failure(unsafe.principal(_claims(), credential))
    assert "at most 600" in _failure(tokens.principal(_claims(exp=int(time.time()) + 3600), credential))
    assert "neither user nor agent" in _failure(
        tokens.principal(_claims(colonnade_origin="team"), credential)
    )
    book.replace([AGENTS[0], replace(AGENTS[1], allowed_tools=("acme:items:write_item",))])
    assert "no longer cover acme:items:read_item" in _failure(tokens.principal(_claims(), credential))
    book.replace([replace(AGENTS[0], revoked_at=datetime.now(UTC)), AGENTS[1]])
    assert _failure(tokens.principal(_claims(), credential)).startswith("A-AUTH-REVOKED")
    book.replace([AGENTS[1]])
    assert "'planner' is not registered" in _failure(tokens.principal(_claims(), credential))
    book.replace([replace(agent, tenant="globex") for agent in AGENTS])
    assert "not registered in acme" in _failure(tokens.principal(_claims(), credential))


def test_an_agent_begun_chain_has_no_person() -> None:
    tokens = DelegatedTokens(ISSUER, AgentBook(AGENTS), safe_for_agents=_safe)
    claims = _claims(sub="planner", colonnade_origin="agent", act=nested_act(("researcher",)))
    principal = tokens.principal(claims, f"jwt:{ISSUER}")
    assert isinstance(principal, Principal) and principal.on_behalf_of is None
    assert principal.actor_chain == ("agent:planner", "agent:researcher")


async def test_the_chain_is_stored_in_every_record_hash_chained_and_pseudonymised(
    engine: AsyncEngine,
) -> None:
    log = AuditLog(AuditStore(engine), b"k" * 32)
    chain = ("user:alice@example.com", "agent:planner", "agent:researcher")
    principal = Principal(PrincipalKind.AGENT, "researcher", tenant="acme", actor_chain=chain)
    await log.append(AuditEvent.by(principal, EventKind.CALL, tool="acme:items:read_item", outcome="success"))
    await log.append(AuditEvent.by(Principal(PrincipalKind.USER, "bob", tenant="acme"), EventKind.CALL))
    first, second = await log.store.query(AuditFilter(tenant="acme"))
    stored = first.details["actor_chain"]
    assert stored[1:] == ["agent:planner", "agent:researcher"]
    assert stored[0].startswith("user:pseudonym:") and "alice" not in str(first.details)
    assert "actor_chain" not in second.details
    assert (await verify_chain(log.store)).ok
    await log.store.aclose()


def test_a_parked_calls_snapshot_keeps_the_chain_and_the_person() -> None:
    person = Principal(
        PrincipalKind.USER, "alice", tenant="acme", persona="developer", scopes=frozenset({"s"})
    )
    principal = Principal(
        PrincipalKind.AGENT,
        "researcher",
        tenant="acme",
        persona="agent",
        allowed_tools=("acme:items:read_item",),
        actor_chain=("user:alice", "agent:planner", "agent:researcher"),
        on_behalf_of=person,
    )
    snapshot = snapshot_of(principal)
    assert snapshot["on_behalf_of"]["scopes"] == ["s"]  # JSON, as the approvals table stores it
    assert principal_from(snapshot) == principal


def test_delegation_needs_a_token_source_and_its_own_issuer_name(tmp_path: Path) -> None:
    alone = AuthSettings(enabled=True, delegation=DelegationSettings(enabled=True))
    with pytest.raises(AuthConfigError, match=r"configure auth\.issuers or auth\.dev_issuer"):
        Governance(Settings(data_dir=tmp_path, auth=alone), Catalog())
    public = dict(ECKey.generate_key("P-256", auto_kid=True).as_dict(private=False))
    clash = IssuerSettings(issuer="http://127.0.0.1:8765", keys=[public])
    named = AuthSettings(issuers=[clash], delegation=DelegationSettings(enabled=True))
    with pytest.raises(AuthConfigError, match="the gateway's own delegation issuer"):
        Governance(Settings(data_dir=tmp_path, auth=named), Catalog())
    fine = Governance(
        Settings(
            data_dir=tmp_path, auth=AuthSettings(dev_issuer=True, delegation=DelegationSettings(enabled=True))
        ),
        Catalog(),
    )
    assert fine.token_exchange is not None and fine.token_exchange.issuer == "http://127.0.0.1:8765"
    assert (tmp_path / "delegation-signing.jwk").stat().st_mode & 0o077 == 0  # owner-only


async def test_an_exchange_while_the_subjects_issuer_is_unreachable_says_try_again(tmp_path: Path) -> None:
    async def unreachable(url: str) -> Any:
        raise OSError("connection refused")

    issuer = "https://idp.example"
    keys = IssuerKeys(jwks_url=f"{issuer}/jwks", fetch=unreachable)
    authenticator = Authenticator(
        ClaimMapping(ClaimNames(), AgentBook()),
        tokens=TokenVerifier([TrustedIssuer(issuer, keys, frozenset({"ES256"}), "http://127.0.0.1:9/mcp")]),
    )
    exchange = TokenExchange(
        DelegationSettings(enabled=True),
        issuer=ISSUER,
        audience=f"{ISSUER}/mcp",
        signer=DelegationSigner.load_or_create(tmp_path / "key.jwk"),
        authenticator=authenticator,
        actors=ActorTokens(AgentBook(), ProofsSeen()),
    )
    signer = ECKey.generate_key("P-256", auto_kid=True)
    subject = jwt.encode({"alg": "ES256", "kid": signer.kid}, {"iss": issuer, "sub": "alice"}, signer)
    asked = ExchangeRequest(TOKEN_EXCHANGE, subject, ACCESS_TOKEN_TYPE, "a.b.c", JWT_TOKEN_TYPE)
    refused = await exchange.exchange(
        asked, method="POST", url=f"{ISSUER}/oauth/token", path="/oauth/token", dpop=None
    )
    assert isinstance(refused, ExchangeRefusal)
    assert (refused.error, refused.status, refused.code) == (
        "temporarily_unavailable",
        503,
        "A-AUTH-JWKS-UNAVAILABLE",
    )
