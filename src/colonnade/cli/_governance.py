"""The governance services for the CLI: the operator acts on the configured database directly.

Whoever can run these commands can read the database anyway, so the CLI acts as the gateway's
own operator principal (`system:cli`), bound to no tenant; every change it makes is audited
under that name, like changes made over REST are under the caller's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from colonnade.cli.common import EXIT_FINDINGS, EXIT_USAGE, fail
from colonnade.config import Settings
from colonnade.governance.principal import Principal

if TYPE_CHECKING:
    from colonnade.runtime.governance import Governance

__all__ = ["OPERATOR", "run_governance"]

T = TypeVar("T")
OPERATOR = Principal.system("cli")


def run_governance(settings: Settings, work: Callable[[Governance], Awaitable[T]]) -> T:
    """Migrate the database, load the catalog, run `work` with the services; refusals end the command."""
    from colonnade.cli.common import store_settings

    settings = store_settings(settings)
    from colonnade.catalog.catalog import Catalog
    from colonnade.cli.database_problem import DATABASE_ERRORS, database_problem
    from colonnade.errors import ColonnadeError
    from colonnade.governance.refusals import GovernanceRefusal
    from colonnade.runtime.governance import Governance
    from colonnade.runtime.sync import CatalogSync
    from colonnade.shared_state.announce import announcer
    from colonnade.store import ContractStore, create_store_engine, migrate_engine

    async def main() -> T:
        engine = create_store_engine(settings.effective_database_url)
        try:
            await migrate_engine(engine)
            catalog = Catalog(profile=settings.wire_profile)
            await CatalogSync(ContractStore(engine), catalog).refresh()
            # Changes the command makes reach the running replicas over the fan-out, when configured.
            async with announcer(settings.shared_state) as changes:
                governance = Governance(settings, catalog, engine, changes=changes)
                try:
                    await governance.refresh()
                    return await work(governance)
                finally:
                    await governance.aclose()
        finally:
            await engine.dispose()

    try:
        return asyncio.run(main())
    except GovernanceRefusal as refused:
        fail(f"{refused.code}: {refused.message}", EXIT_FINDINGS)
    except ColonnadeError as exc:
        fail(f"{exc.code}: {exc}", EXIT_USAGE)
    except DATABASE_ERRORS as exc:
        fail(database_problem(settings, exc))
