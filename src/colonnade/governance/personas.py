"""The 12 scopes and the 6 personas: what each kind of caller may be granted, in one table.

A credential names a persona and carries scopes; what the principal may do is the intersection of
the two, so a token never grants more than its persona allows, and a persona never grants what
the token left out. `docs/governance.md` shows the same table (a test compares them cell by cell).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

__all__ = [
    "ALL_SCOPES",
    "PERSONA_SCOPES",
    "Persona",
    "Scope",
    "effective_scopes",
    "parse_scopes",
    "persona_of",
]


class Scope(StrEnum):
    PLATFORM_READ = "colonnade:platform:read"
    PLATFORM_WRITE = "colonnade:platform:write"
    CATALOG_READ = "colonnade:catalog:read"
    CATALOG_WRITE = "colonnade:catalog:write"
    SUBSCRIPTIONS_READ = "colonnade:subscriptions:read"
    SUBSCRIPTIONS_WRITE = "colonnade:subscriptions:write"
    SECURITY_READ = "colonnade:security:read"
    SECURITY_WRITE = "colonnade:security:write"
    METRICS_READ = "colonnade:metrics:read"
    LOGS_TECHNICAL = "colonnade:logs:technical"
    LOGS_FUNCTIONAL = "colonnade:logs:functional"
    LOGS_FULL = "colonnade:logs:full"


class Persona(StrEnum):
    ADMIN = "admin"
    PRODUCT_OWNER = "product_owner"
    DEVELOPER = "developer"
    CONSUMER = "consumer"
    SECURITY = "security"
    AGENT = "agent"


ALL_SCOPES: frozenset[str] = frozenset(Scope)

PERSONA_SCOPES: dict[Persona, frozenset[str]] = {
    Persona.ADMIN: ALL_SCOPES,
    Persona.PRODUCT_OWNER: frozenset(
        {
            Scope.CATALOG_READ,
            Scope.CATALOG_WRITE,
            Scope.SUBSCRIPTIONS_READ,
            Scope.SUBSCRIPTIONS_WRITE,
            Scope.METRICS_READ,
            Scope.LOGS_TECHNICAL,
            Scope.LOGS_FUNCTIONAL,
        }
    ),
    # catalog:write is further limited to non-production APIs (authorization.py)
    Persona.DEVELOPER: frozenset(
        {Scope.CATALOG_READ, Scope.CATALOG_WRITE, Scope.METRICS_READ, Scope.LOGS_TECHNICAL}
    ),
    # subscriptions: its own only; calls: the APIs it is subscribed to
    Persona.CONSUMER: frozenset({Scope.CATALOG_READ, Scope.SUBSCRIPTIONS_READ, Scope.SUBSCRIPTIONS_WRITE}),
    Persona.SECURITY: frozenset(
        {Scope.SECURITY_READ, Scope.SECURITY_WRITE, Scope.LOGS_FULL, Scope.METRICS_READ, Scope.CATALOG_READ}
    ),
    # calls: its allow-list in its tenant only
    Persona.AGENT: frozenset({Scope.CATALOG_READ}),
}


def persona_of(name: str | None) -> Persona | None:
    """The persona a credential names; None for a missing or unknown one (which grants nothing)."""
    try:
        return Persona(name) if name is not None else None
    except ValueError:
        return None


def parse_scopes(value: object) -> frozenset[str]:
    """Scopes as OAuth carries them: one space-separated string, or a list of strings."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(item for item in value if isinstance(item, str))
    return frozenset()


def effective_scopes(persona: Persona | None, granted: Iterable[str]) -> frozenset[str]:
    """What a principal may use: the scopes granted that its persona allows (unknown ones dropped)."""
    if persona is None:
        return frozenset()
    return PERSONA_SCOPES[persona] & frozenset(granted)
