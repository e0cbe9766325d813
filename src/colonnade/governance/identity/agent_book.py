"""The registered agents, in memory: token checks read it synchronously on every request.

It is a snapshot of the agents table, replaced whole: at start, after every change this gateway
makes, and on each poll (so a revocation made by another replica or the CLI applies within the
poll interval).
"""

from __future__ import annotations

from collections.abc import Iterable

from colonnade.store.agents_repo import AgentRecord

__all__ = ["AgentBook"]


class AgentBook:
    def __init__(self, agents: Iterable[AgentRecord] = ()) -> None:
        self._agents: dict[str, AgentRecord] = {}
        self.replace(agents)

    def replace(self, agents: Iterable[AgentRecord]) -> None:
        self._agents = {agent.id: agent for agent in agents}

    def get(self, agent_id: str) -> AgentRecord | None:
        return self._agents.get(agent_id)
