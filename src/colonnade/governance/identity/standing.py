"""Is a principal recorded earlier still in good standing? Asked when it acts again without a request.

An approved call resumed later (by its requester, or by the approver with `run`) runs as the
requester as it was when it asked. Between then and now its credential may have been revoked or
may have expired, so before such a call runs its credential is read again from the database (not
from any cache): an API key must still exist, be unrevoked and unexpired; an agent must still be
registered in the same tenant and unrevoked. The principal comes back rebuilt from what the
stores hold now (an agent's current allow-list, a key's current persona and scopes), so the
authorization that follows judges the requester as it stands. A token from an issuer is not kept
by the gateway, so a user who asked with one keeps the identity and scopes it had.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from colonnade.governance.identity.delegation_narrowing import SafeForAgents, narrow_tools
from colonnade.governance.identity.failures import AuthFailure, invalid
from colonnade.governance.personas import effective_scopes, persona_of
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.store.agents_repo import AgentStore
from colonnade.store.api_keys_repo import ApiKeyStore

__all__ = ["API_KEY_CREDENTIAL", "Standing"]

API_KEY_CREDENTIAL = "api_key:"
"""How a principal authenticated by an API key names its credential (`api_key:<key id>`)."""


class Standing:
    def __init__(
        self,
        api_keys: ApiKeyStore | None,
        agents: AgentStore | None,
        *,
        safe_for_agents: SafeForAgents | None = None,
    ) -> None:
        self.api_keys = api_keys
        self.agents = agents
        self.safe_for_agents = safe_for_agents

    async def recheck(self, principal: Principal) -> Principal | AuthFailure:
        """The principal as its credential stands now, or why it no longer may act."""
        credential = principal.credential or ""
        if credential.startswith(API_KEY_CREDENTIAL):
            return await self._api_key(principal, credential.removeprefix(API_KEY_CREDENTIAL))
        if principal.kind is PrincipalKind.AGENT:
            return await self._agent(principal)
        return principal

    async def _api_key(self, principal: Principal, key_id: str) -> Principal | AuthFailure:
        record = await self.api_keys.get(key_id) if self.api_keys is not None else None
        if record is None or record.owner != principal.id:
            return invalid("A-AUTH-API-KEY", f"the API key {key_id} of {principal.key} no longer exists")
        if record.revoked_at is not None:
            return invalid("A-AUTH-REVOKED", f"the API key {key_id} of {principal.key} has been revoked")
        if record.expires_at is not None and record.expires_at <= datetime.now(UTC):
            return invalid("A-AUTH-EXPIRED", f"the API key {key_id} of {principal.key} has expired")
        return replace(
            principal,
            tenant=record.tenant,
            persona=record.persona,
            scopes=effective_scopes(persona_of(record.persona), record.scopes),
            team=record.team,
        )

    async def _agent(self, principal: Principal) -> Principal | AuthFailure:
        agent = await self.agents.get(principal.id) if self.agents is not None else None
        if agent is None or agent.tenant != principal.tenant:
            return invalid("A-AUTH-AGENT", f"the agent {principal.id} is no longer registered")
        if agent.revoked_at is not None:
            return invalid("A-AUTH-REVOKED", f"the agent {principal.id} has been revoked")
        if principal.actor_chain:
            return await self._chain(principal)
        return replace(principal, allowed_tools=agent.allowed_tools)

    async def _chain(self, principal: Principal) -> Principal | AuthFailure:
        """A delegated principal keeps its narrowed tools while every agent of its chain still covers them."""
        assert self.agents is not None
        for key in principal.actor_chain:
            kind, _, agent_id = key.partition(":")
            if kind != PrincipalKind.AGENT.value:
                continue
            agent = await self.agents.get(agent_id)
            if agent is None or agent.tenant != principal.tenant or agent.revoked_at is not None:
                return invalid("A-AUTH-DELEGATION", f"the chain's agent {agent_id} may no longer act")
            bounds = [agent.allowed_tools]
            wider = narrow_tools(principal.allowed_tools or (), bounds, self.safe_for_agents or _unsafe).wider
            if wider:
                return invalid(
                    "A-AUTH-DELEGATION", f"{agent_id}'s allow-list no longer covers {', '.join(wider)}"
                )
        return principal


def _unsafe(name: str) -> bool:
    return False
