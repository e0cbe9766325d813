"""The persona sets of ADR-012's matrix that the core tools' definitions share."""

from __future__ import annotations

from colonnade.governance.personas import Persona

__all__ = ["BUILDERS", "EVERYONE", "OPERATORS", "OWNERS", "PEOPLE", "READERS_OF_FIGURES", "SECURITY"]

EVERYONE = frozenset(Persona)
PEOPLE = EVERYONE - {Persona.AGENT}
BUILDERS = frozenset({Persona.ADMIN, Persona.PRODUCT_OWNER, Persona.DEVELOPER})
"""Who writes contracts: admins, and the product owners and developers of the API's team."""
OWNERS = frozenset({Persona.ADMIN, Persona.PRODUCT_OWNER})
"""Who answers for an API: its tenant's admins and its team's product owner."""
OPERATORS = frozenset({Persona.ADMIN})
SECURITY = frozenset({Persona.ADMIN, Persona.SECURITY})
READERS_OF_FIGURES = frozenset({Persona.ADMIN, Persona.PRODUCT_OWNER, Persona.DEVELOPER, Persona.SECURITY})
"""Who reads the gateway's metrics and technical errors (colonnade:metrics:read)."""
