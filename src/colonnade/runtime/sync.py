"""Keep the catalog in step with the store, so a `contract publish` in another process goes live.

A cheap fingerprint of the contracts table is compared on a short interval; only when it moved
are the published and deprecated versions re-read and the catalog reconciled (which announces the
change). A deprecation notice edited on an already deprecated version changes no fingerprint: it
goes live with the next change of the table or the next start. A publish announced on the change
fan-out (`catalog.changed`, by a replica or the CLI) is picked up at once; the poll stays as the
fallback when Redis is away.
"""

from __future__ import annotations

import asyncio
import logging

from colonnade.catalog.catalog import Catalog
from colonnade.contracts.model import ContractStatus
from colonnade.shared_state import Change, Fanout
from colonnade.shared_state.topics import CATALOG_CHANGED
from colonnade.store.contracts_repo import ContractStore

__all__ = ["CatalogSync"]

logger = logging.getLogger(__name__)
Fingerprint = frozenset[tuple[str, str, str, str, str]]
_CALLABLE = (ContractStatus.PUBLISHED.value, ContractStatus.DEPRECATED.value)


class CatalogSync:
    def __init__(self, store: ContractStore, catalog: Catalog, *, interval_s: float = 2.0) -> None:
        self.store = store
        self.catalog = catalog
        self.interval_s = interval_s
        self._fingerprint: Fingerprint | None = None

    async def refresh(self) -> bool:
        """Reconcile once; True when the catalog was changed.

        Every published and deprecated version is held (callers that pin a version reach it; the
        catalog serves the newest non-deprecated one); drafts and deleted versions are dropped.
        """
        fingerprint = await self.store.fingerprint()
        if fingerprint == self._fingerprint:
            return False
        self._fingerprint = fingerprint
        callable_versions: dict[tuple[str, str, str], str] = {
            (tenant, name, version): status
            for tenant, name, version, status, _ in fingerprint
            if status in _CALLABLE
        }
        held = {(e.tenant, e.api, e.version): e.deprecated for e in self.catalog.api_versions()}
        changed = False
        for tenant, api, version in held:
            if (tenant, api, version) not in callable_versions:
                changed |= bool(self.catalog.remove(tenant, api, version))
        for stored in await self.store.callable_contracts():
            deprecated = stored.status is ContractStatus.DEPRECATED
            if held.get((stored.tenant, stored.name, stored.version)) != deprecated:
                changed |= bool(self.catalog.publish(stored.contract()))
        return changed

    def follow(self, changes: Fanout) -> None:
        """Reconcile as soon as another replica (or the CLI) says it published."""
        changes.subscribe(CATALOG_CHANGED, self._on_change)

    async def _on_change(self, change: Change) -> None:
        await self.refresh()

    async def run(self) -> None:
        """Poll until cancelled; a failing poll is logged and retried on the next tick."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.refresh()
            except Exception:  # the store may be briefly unavailable; the next tick retries
                logger.exception("catalog refresh from the store failed")
