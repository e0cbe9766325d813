"""A delegated token's claims, as the gateway issued them, become the narrowest `Principal` of its chain.

Only tokens of the gateway's own delegation issuer are read here (an `act` claim from another
issuer is never trusted as a chain). The token names its origin (`sub`, `colonnade_origin`: a
person or an agent) and its actors in nested `act` claims, the outermost being the agent acting
now (RFC 8693 section 4.1). It is accepted while every agent of the chain is still registered in
the token's tenant and unrevoked, its tools are still covered by each agent's allow-list as it
stands now, the chain is no deeper than `auth.delegation.max_depth`, and it is bound (`cnf.jkt`)
to the acting agent's registered key. The principal is that agent, with the token's scopes and
tools, the whole chain (`actor_chain`, origin first) and, for a person's chain, the person.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.confirmation import confirmation
from colonnade.governance.identity.delegation_narrowing import SafeForAgents, narrow_tools
from colonnade.governance.identity.failures import AuthFailure, invalid
from colonnade.governance.personas import Persona, effective_scopes, parse_scopes, persona_of
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.agents_repo import AgentRecord

__all__ = ["ORIGIN_CLAIM", "TOOLS_CLAIM", "DelegatedTokens", "actors_of", "nested_act"]

ORIGIN_CLAIM = "colonnade_origin"
TOOLS_CLAIM = "colonnade_tools"
_CODE = "A-AUTH-DELEGATION"
_MAX_NESTING = 16


def nested_act(actors: tuple[str, ...]) -> dict[str, Any]:
    """The `act` claim of a chain of agent ids given innermost (first delegate) to outermost."""
    claim: dict[str, Any] = {}
    for actor in actors:
        claim = {"sub": actor, **({"act": claim} if claim else {})}
    return claim


def actors_of(claim: object) -> tuple[str, ...] | None:
    """The agent ids of a nested `act` claim, innermost first; None when it is malformed."""
    outermost_first: list[str] = []
    while claim is not None:
        if not isinstance(claim, Mapping) or len(outermost_first) >= _MAX_NESTING:
            return None
        actor = claim.get("sub")
        if not isinstance(actor, str) or not actor:
            return None
        outermost_first.append(actor)
        claim = claim.get("act")
    return tuple(reversed(outermost_first)) if outermost_first else None


@dataclass(frozen=True, slots=True)
class DelegatedTokens:
    issuer: str
    agents: AgentBook
    max_depth: int = 3
    max_ttl_s: int = 600
    safe_for_agents: SafeForAgents = lambda name: False

    def principal(self, claims: Mapping[str, Any], credential: str) -> Principal | AuthFailure:
        actors = actors_of(claims.get("act"))
        if actors is None:
            return invalid(_CODE, "a delegated token needs a well-formed act claim (nested sub)")
        if len(actors) > self.max_depth:
            return invalid(
                _CODE, f"the chain is {len(actors)} delegations deep; at most {self.max_depth} are allowed"
            )
        lifetime = _lifetime(claims)
        if lifetime is None or lifetime > self.max_ttl_s:
            return invalid(_CODE, f"a delegated token lives at most {self.max_ttl_s} s")
        tenant, origin = claims.get("tenant"), claims.get(ORIGIN_CLAIM)
        subject = claims.get("sub")
        if not isinstance(tenant, str) or not isinstance(subject, str):
            return invalid(_CODE, "a delegated token names its tenant and its origin (sub)")
        agent_ids = (subject, *actors) if origin == PrincipalKind.AGENT.value else actors
        records = self._agents(agent_ids, tenant)
        if isinstance(records, AuthFailure):
            return records
        tools = claims.get(TOOLS_CLAIM)
        if not isinstance(tools, list) or not all(isinstance(tool, str) for tool in tools):
            return invalid(_CODE, f"a delegated token lists its tools ({TOOLS_CLAIM})")
        bounds = [record.allowed_tools for record in records]
        wider = narrow_tools(tools, bounds, self.safe_for_agents).wider
        if wider:
            return invalid(
                _CODE, f"the chain's allow-lists no longer cover {', '.join(wider)}: ask for a new token"
            )
        acting = records[-1]
        if acting.key_thumbprint is None or confirmation(claims).key != acting.key_thumbprint:
            return invalid(_CODE, "the token is not bound (cnf.jkt) to the acting agent's registered key")
        scopes = parse_scopes(claims.get("scope"))
        person = self._person(claims, subject, tenant, scopes) if origin == PrincipalKind.USER.value else None
        if isinstance(person, AuthFailure):
            return person
        if person is None and origin != PrincipalKind.AGENT.value:
            return invalid(_CODE, f"the token's origin ({ORIGIN_CLAIM}) is neither user nor agent")
        origin_key = f"{origin}:{subject}"
        return Principal(
            PrincipalKind.AGENT,
            acting.id,
            tenant=tenant,
            persona=Persona.AGENT.value,
            scopes=effective_scopes(Persona.AGENT, scopes),
            allowed_tools=tuple(tools),
            credential=credential,
            actor_chain=(origin_key, *(f"agent:{actor}" for actor in actors)),
            on_behalf_of=person,
        )

    def _agents(self, agent_ids: tuple[str, ...], tenant: str) -> tuple[AgentRecord, ...] | AuthFailure:
        found: list[AgentRecord] = []
        for agent_id in agent_ids:
            record = self.agents.get(agent_id)
            if record is None or record.tenant != tenant:
                return invalid(_CODE, f"the chain's agent {agent_id!r} is not registered in {tenant}")
            if record.revoked_at is not None:
                return invalid("A-AUTH-REVOKED", f"the chain's agent {agent_id!r} has been revoked")
            found.append(record)
        return tuple(found)

    def _person(
        self, claims: Mapping[str, Any], subject: str, tenant: str, scopes: frozenset[str]
    ) -> Principal | AuthFailure:
        persona = persona_of(claims.get("persona") if isinstance(claims.get("persona"), str) else None)
        if persona is None or persona is Persona.AGENT:
            return invalid(_CODE, "a person's delegated token names the person's persona")
        team = claims.get("team")
        return Principal(
            PrincipalKind.USER,
            subject,
            tenant=tenant,
            persona=persona.value,
            scopes=effective_scopes(persona, scopes),
            team=team if isinstance(team, str) else None,
            credential="delegated",
        )


def _lifetime(claims: Mapping[str, Any]) -> float | None:
    issued, expires = claims.get("iat"), claims.get("exp")
    if _number(issued) and _number(expires):
        return float(expires) - float(issued)
    return None


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
