"""The personas of ADR-012 as callers of a governed gateway (tests/platform): one token each.

The agent `platform-bot` is allowed its tenant's items and three core tools, one of which
(get_config) ADR-012 never shows an agent.
"""

from __future__ import annotations

from colonnade.governance.personas import Persona
from tests.support.governed import Governed

__all__ = ["AGENT", "AGENT_ALLOWS", "persona_token", "register_agent"]

AGENT = "platform-bot"
AGENT_ALLOWS = (
    "acme:items:*",
    "colonnade:platform:list_apis",
    "colonnade:platform:get_api",
    "colonnade:platform:get_config",
)


def register_agent(governed: Governed) -> None:
    with governed.rest(governed.token("security", sub="officer")) as client:
        registered = client.post("/v1/agents", json={"agent_id": AGENT, "allowed_tools": list(AGENT_ALLOWS)})
        assert registered.status_code == 201, registered.text


def persona_token(governed: Governed, persona: Persona, **claims: object) -> str:
    """A token of each persona in tenant acme; builders are of team-a, which owns acme:items and acme:lab."""
    if persona is Persona.AGENT:
        body = {"sub": AGENT, "agent_id": AGENT, "tenant": "acme", **claims}
        return governed.issuer.mint(body, audience=governed.resource)
    team = "team-a" if persona in (Persona.PRODUCT_OWNER, Persona.DEVELOPER) else None
    sub = str(claims.pop("sub", f"{persona.value}-1"))
    return governed.token(persona, team=team, sub=sub, **claims)
