"""Who may change an API and how a change reaches the catalog: the store first, then the catalog
follows it (`CatalogSync.refresh`), and each change is an audit event as from the CLI.

An admin changes its tenant's APIs (every tenant's, without one); a product owner or developer only
its team's (the contract's `owner`), and a developer only non-production ones. An API the caller
may not see is refused like an unknown one.
"""

from __future__ import annotations

from colonnade.contracts.model import Contract
from colonnade.governance.audit import AuditEvent, EventKind
from colonnade.governance.personas import Persona, persona_of
from colonnade.governance.principal import Principal, PrincipalKind
from colonnade.governance.reach import TEAM_BOUND
from colonnade.governance.refusals import Forbidden, UnknownResource
from colonnade.governance.stewards import in_reach
from colonnade.governance.tool_access import NON_PRODUCTION
from colonnade.platform.services import PlatformServices
from colonnade.store.records import StoredContract

__all__ = ["may_change", "record_change"]


def may_change(principal: Principal, contract: Contract, *, exists: bool) -> None:
    """Refuse unless the caller may change this API (an existing one it may not see is unknown)."""
    if principal.kind is PrincipalKind.SYSTEM:
        return
    label = f"{contract.tenant}:{contract.name}"
    persona = persona_of(principal.persona)
    team_bound = persona in TEAM_BOUND
    hidden = not in_reach(principal, contract.tenant) or (team_bound and contract.owner != principal.team)
    if hidden and exists:
        raise UnknownResource(f"no API {label} is stored for you (colonnade__list_apis lists yours)")
    if not in_reach(principal, contract.tenant):
        raise Forbidden(f"{principal.key} may not publish APIs of tenant {contract.tenant!r}")
    if team_bound and contract.owner != principal.team:
        raise Forbidden(
            f"a {persona} publishes its team's APIs only: give the contract owner: {principal.team}"
            if principal.team
            else f"a {persona} credential without a team may not publish APIs"
        )
    environment = contract.environment.value if contract.environment is not None else None
    if persona is Persona.DEVELOPER and environment not in NON_PRODUCTION:
        raise Forbidden(
            f"developers change non-production APIs only; {label} {contract.version} is "
            f"{environment or 'prod (not declared)'}"
        )


async def record_change(
    services: PlatformServices, principal: Principal, kind: EventKind, stored: StoredContract, **extra: object
) -> None:
    """Let the catalog follow the store, and leave the change's audit event."""
    if services.refresh is not None:
        await services.refresh()
    if services.audit is not None:
        details = {"api": stored.name, "version": stored.version, "status": stored.status.value, **extra}
        await services.audit.append(AuditEvent.by(principal, kind, tenant=stored.tenant, details=details))
