"""The composition root: one object that owns the store, catalog, adapters, pipeline and surfaces."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette

from colonnade.adapters.http import HttpAdapter
from colonnade.calls.default_pipeline import build_pipeline
from colonnade.calls.service import CallService
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.runtime.sources import expand_contract_paths, load_for_publishing
from colonnade.runtime.sync import CatalogSync
from colonnade.store.contracts_repo import ContractStore
from colonnade.store.engine import create_store_engine
from colonnade.store.migrate import migrate_engine
from colonnade.surfaces.app import build_http_app
from colonnade.surfaces.mcp_server import McpSurface

__all__ = ["Gateway", "PublishedFile"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishedFile:
    path: Path
    label: str
    tools: int


class Gateway:
    """Build with `await Gateway.open(settings)`; close with `await gateway.aclose()`."""

    def __init__(self, settings: Settings, engine: AsyncEngine) -> None:
        self.settings = settings
        self.engine = engine
        self.store = ContractStore(engine)
        self.catalog = Catalog(profile=settings.wire_profile)
        self.http = HttpAdapter()
        self.calls = CallService(self.catalog, build_pipeline(self.http))
        self.mcp = McpSurface(self.catalog, self.calls, page_size=settings.server.page_size)
        self.sync = CatalogSync(self.store, self.catalog, interval_s=settings.catalog_poll_s)

    @classmethod
    async def open(cls, settings: Settings) -> Gateway:
        """Migrate the database, publish the configured contracts and load the catalog."""
        engine = create_store_engine(settings.effective_database_url)
        try:
            await migrate_engine(engine)
        except BaseException:
            await engine.dispose()
            raise
        gateway = cls(settings, engine)
        await gateway.publish_files(settings.contracts)
        await gateway.sync.refresh()
        return gateway

    async def publish_files(self, paths: Sequence[Path]) -> list[PublishedFile]:
        """Validate, store as published and serve each contract file (folders are expanded)."""
        published = []
        for path in expand_contract_paths(paths):
            contract = load_for_publishing(path)
            stored = await self.store.save(contract)
            change = self.catalog.publish(stored.contract())
            published.append(PublishedFile(path, stored.label, len(change.added) + len(change.updated)))
        await self.sync.refresh()
        return published

    async def readiness(self) -> dict[str, Any]:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            database: dict[str, Any] = {"ok": True}
        except Exception as exc:  # readiness reports, it never raises
            database = {"ok": False, "error": str(exc)}
        return {"database": database, "catalog": {"ok": True, "tools": len(self.catalog)}}

    def http_app(self) -> Starlette:
        return build_http_app(
            self.mcp, host=self.settings.server.host, readiness=self.readiness, lifespan=self._background
        )

    @contextlib.asynccontextmanager
    async def _background(self) -> AsyncIterator[None]:
        task = asyncio.create_task(self.sync.run(), name="colonnade-catalog-sync")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def aclose(self) -> None:
        await self.http.aclose()
        await self.engine.dispose()
