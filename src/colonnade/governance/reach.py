"""What a caller's persona lets it see, said beside "no tool named ..." when that may be the reason.

The hint depends on the caller alone, never on the tool: an unknown name and a tool the caller may
not see get the same words, so the hint cannot confirm that a hidden tool exists. It names the
constraint that most often hides everything (a developer key made without a team) and the fix.
"""

from __future__ import annotations

from colonnade.governance.personas import Persona, persona_of
from colonnade.governance.principal import Principal, PrincipalKind

__all__ = ["TEAM_BOUND", "reach_hint"]

TEAM_BOUND = frozenset({Persona.PRODUCT_OWNER, Persona.DEVELOPER})
"""Personas that see only the APIs their team owns (the contract's `owner`)."""


def reach_hint(principal: Principal) -> str:
    """` (a developer sees ...)` for a caller whose persona limits what it sees; "" otherwise."""
    persona = persona_of(principal.persona)
    if principal.kind is PrincipalKind.SYSTEM or persona is None:
        return ""
    name = persona.value.replace("_", " ")
    if persona in TEAM_BOUND and principal.team is None:
        return (
            f" (a {name} sees only its team's APIs, and this credential has no team: create the key"
            " with --team, or the token with a team claim)"
        )
    if persona in TEAM_BOUND:
        return f" (a {name} sees only the APIs of its team, {principal.team})"
    if principal.tenant is None and persona is not Persona.ADMIN:
        return f" (a {name} credential without a tenant sees no tools: give it a tenant)"
    if persona is Persona.AGENT:
        return " (an agent sees only the tools on its allow-list)"
    return ""
