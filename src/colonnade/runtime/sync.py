"""Keep the catalog in step with the store, so a `contract publish` in another process goes live.

A cheap fingerprint of the contracts table is compared on a short interval; only when it moved
are the published versions re-read and the catalog reconciled (which announces the change).
A publish announced on the change fan-out (`catalog.changed`, by a replica or the CLI) is picked
up at once; the poll stays as the fallback when Redis is away.
"""

from __future__ import annotations

import asyncio
import logging

from colonnade.catalog.catalog import Catalog
from colonnade.shared_state import Change, Fanout
from colonnade.shared_state.topics import CATALOG_CHANGED
from colonnade.store.contracts_repo import ContractStore

__all__ = ["CatalogSync"]

logger = logging.getLogger(__name__)
Fingerprint = frozenset[tuple[str, str, str, str, str]]


class CatalogSync:
    def __init__(self, store: ContractStore, catalog: Catalog, *, interval_s: float = 2.0) -> None:
        self.store = store
        self.catalog = catalog
        self.interval_s = interval_s
        self._fingerprint: Fingerprint | None = None

    async def refresh(self) -> bool:
        """Reconcile once; True when the catalog was changed."""
        fingerprint = await self.store.fingerprint()
        if fingerprint == self._fingerprint:
            return False
        self._fingerprint = fingerprint
        published: dict[tuple[str, str], set[str]] = {}
        for tenant, name, version, status, _ in fingerprint:
            if status == "published":
                published.setdefault((tenant, name), set()).add(version)
        changed = False
        for entry in self.catalog.api_versions():
            if entry.version not in published.get((entry.tenant, entry.api), set()):
                changed |= bool(self.catalog.remove(entry.tenant, entry.api, entry.version))
        for stored in await self.store.published_contracts():
            if self.catalog.active_version(stored.tenant, stored.name) != stored.version:
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
