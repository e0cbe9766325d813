"""From a verified token's claims to a `Principal`: persona, tenant, team, scopes; or why not.

Claim names are configurable (`auth.claims`). A token must name a known persona; every persona
but admin needs a tenant (an admin without one administers the platform). Scopes are the token's,
kept only where the persona allows them. A token for an agent (it names a registered agent, or
its persona is `agent`) must match the agent's registration: same tenant, not revoked, bound to
the agent's key when it registered one, and living at most `agent_token_max_s` (10 minutes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from colonnade.config import ClaimNames
from colonnade.governance.identity.agent_book import AgentBook
from colonnade.governance.identity.confirmation import confirmation
from colonnade.governance.identity.failures import AuthFailure, invalid
from colonnade.governance.personas import PERSONA_SCOPES, Persona, effective_scopes, parse_scopes, persona_of
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = ["ClaimMapping"]

_TENANT = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_MAX_ID = 256


class ClaimMapping:
    def __init__(self, names: ClaimNames, agents: AgentBook, *, agent_token_max_s: int = 600) -> None:
        self.names = names
        self.agents = agents
        self.agent_token_max_s = agent_token_max_s

    def principal(self, claims: Mapping[str, Any], credential: str) -> Principal | AuthFailure:
        names = self.names
        subject = claims.get(names.subject)
        if not isinstance(subject, str) or not 0 < len(subject) <= _MAX_ID:
            return invalid("A-AUTH-CLAIMS", f"the token needs a subject ({names.subject!r})")
        agent_id = claims.get(names.agent)
        if agent_id is not None or claims.get(names.persona) == Persona.AGENT.value:
            return self._agent(claims, agent_id if agent_id is not None else subject, credential)
        persona = persona_of(_string(claims.get(names.persona)))
        if persona is None:
            return invalid("A-AUTH-CLAIMS", f"the token names no known persona ({names.persona!r})")
        tenant = claims.get(names.tenant)
        if tenant is not None and (not isinstance(tenant, str) or _TENANT.match(tenant) is None):
            return invalid("A-AUTH-CLAIMS", f"the token's tenant ({names.tenant!r}) is malformed")
        if tenant is None and persona is not Persona.ADMIN:
            return invalid("A-AUTH-CLAIMS", f"a {persona} token needs a tenant ({names.tenant!r})")
        return Principal(
            PrincipalKind.USER,
            subject,
            tenant=tenant,
            persona=persona.value,
            scopes=effective_scopes(persona, parse_scopes(claims.get(names.scopes))),
            team=_string(claims.get(names.team)),
            credential=credential,
        )

    def _agent(self, claims: Mapping[str, Any], agent_id: object, credential: str) -> Principal | AuthFailure:
        if not isinstance(agent_id, str):
            return invalid("A-AUTH-AGENT", f"the token's agent ({self.names.agent!r}) is malformed")
        agent = self.agents.get(agent_id)
        if agent is None:
            return invalid("A-AUTH-AGENT", "the token names an agent that is not registered")
        if agent.revoked_at is not None:
            return invalid("A-AUTH-REVOKED", "the agent has been revoked")
        tenant = claims.get(self.names.tenant)
        if tenant is not None and tenant != agent.tenant:
            return invalid("A-AUTH-AGENT", "the token's tenant is not the agent's tenant")
        issued, expires = claims.get("iat"), claims.get("exp")
        if not isinstance(issued, int | float) or isinstance(issued, bool):
            return invalid("A-AUTH-AGENT-TOKEN-LIFETIME", "an agent token needs iat (when it was issued)")
        lifetime = float(expires) - float(issued) if isinstance(expires, int | float) else float("inf")
        if lifetime > self.agent_token_max_s:
            return invalid(
                "A-AUTH-AGENT-TOKEN-LIFETIME",
                f"an agent token may live at most {self.agent_token_max_s} s; "
                f"this one lives {lifetime:.0f} s",
                max_s=self.agent_token_max_s,
            )
        if agent.key_thumbprint is not None and confirmation(claims).key != agent.key_thumbprint:
            return invalid("A-AUTH-AGENT", "the token is not bound (cnf.jkt) to the agent's registered key")
        return Principal(
            PrincipalKind.AGENT,
            agent.id,
            tenant=agent.tenant,
            persona=Persona.AGENT.value,
            scopes=PERSONA_SCOPES[Persona.AGENT],
            allowed_tools=agent.allowed_tools,
            credential=credential,
        )


def _string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
