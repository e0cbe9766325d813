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
from colonnade.calls.default_pipeline import PipelineParts, build_pipeline
from colonnade.calls.manifest import Manifests
from colonnade.calls.service import CallService
from colonnade.calls.stages.observe import Observe
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.catalog import Catalog
from colonnade.config import Settings
from colonnade.observability.metrics import GatewayMetrics
from colonnade.observability.tracing import TRACER_NAME, build_tracer_provider
from colonnade.routing.catalog_index import CatalogIndex
from colonnade.routing.learning import CallFeedback, CoOccurrence
from colonnade.routing.router import Router
from colonnade.runtime.health import HealthMonitor
from colonnade.runtime.sources import expand_contract_paths, load_for_publishing
from colonnade.runtime.sync import CatalogSync
from colonnade.store.co_occurrence_repo import CoOccurrenceStore
from colonnade.store.commit_tokens_repo import CommitTokenStore
from colonnade.store.contracts_repo import ContractStore
from colonnade.store.engine import create_store_engine
from colonnade.store.idempotency_repo import IdempotencyStore
from colonnade.store.migrator import migrate_engine
from colonnade.surfaces.app import build_http_app, transport_security_for
from colonnade.surfaces.mcp_discovery import Discovery
from colonnade.surfaces.mcp_routing import DynamicToolList
from colonnade.surfaces.mcp_server import McpSurface
from colonnade.surfaces.metrics_route import metrics_route
from colonnade.surfaces.pages import routes as page_routes
from colonnade.surfaces.rest import RestSurface

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
        self.health = HealthMonitor(interval_s=settings.health_interval_s)
        self.idempotency = IdempotencyStore(engine)
        self.two_phase = TwoPhaseCoordinator(self.catalog, CommitTokenStore(engine))
        self.metrics = GatewayMetrics()
        self.metrics.track_catalog(self.catalog)
        self.tracer_provider = build_tracer_provider()
        observe = Observe(self.metrics, self.tracer_provider.get_tracer(TRACER_NAME))
        pipeline = build_pipeline(
            PipelineParts(
                http=self.http,
                observe=observe,
                idempotency=self.idempotency,
                idempotency_retention_s=settings.idempotency_retention_s,
                two_phase=self.two_phase,
                health=self.health,
            )
        )
        manifests = Manifests.from_folder(settings.manifests_dir)
        self.calls = CallService(
            self.catalog, pipeline, manifests, self.two_phase, on_refused=observe.refused
        )
        # The embedded default keeps the routing index under data_dir; co-occurrence is in the database.
        routing_dir = settings.data_dir / "routing" if settings.database_url is None else None
        self.tool_index = CatalogIndex(self.catalog, directory=routing_dir)
        self.feedback = CallFeedback(CoOccurrence(), repository=CoOccurrenceStore(engine))
        learned = self.feedback.learned
        self.router = Router.from_settings(settings.routing, self.tool_index.corpus, learning=learned)
        routed = settings.routing.enabled
        self.mcp = McpSurface(
            self.catalog,
            self.calls,
            page_size=settings.server.page_size,
            discovery=Discovery(self.catalog, self.router) if routed else None,
            routing=DynamicToolList(self.catalog, self.router, settings.routing, feedback=self.feedback)
            if routed
            else None,
        )
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
        await gateway.feedback.load()
        await gateway.publish_files(settings.contracts)
        await gateway.sync.refresh()
        gateway.tool_index.reconcile()
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
        host = self.settings.server.host
        guard = transport_security_for(host)
        rest = RestSurface(
            self.catalog, self.calls, page_size=self.settings.server.page_size, transport_security=guard
        )
        return build_http_app(
            self.mcp,
            host=host,
            readiness=self.readiness,
            lifespan=self._background,
            extra_routes=[
                *rest.routes(),
                metrics_route(self.metrics, transport_security=guard),
                *page_routes(
                    self.catalog,
                    self.router,
                    self.metrics,
                    manifests=self.calls.manifests,
                    transport_security=guard,
                ),
            ],
        )

    @contextlib.asynccontextmanager
    async def _background(self) -> AsyncIterator[None]:
        """Catalog sync, two-phase rollbacks, backend health probes and record expiry, while serving."""
        tasks = [
            asyncio.create_task(self.sync.run(), name="colonnade-catalog-sync"),
            asyncio.create_task(self.two_phase.run(), name="colonnade-two-phase-sweep"),
            asyncio.create_task(self.health.run(), name="colonnade-health"),
            asyncio.create_task(self._purge_expired(), name="colonnade-idempotency-expiry"),
        ]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _purge_expired(self, interval_s: float = 60.0) -> None:
        """Keep the store bounded: idempotency records past retention, and finished commit tokens."""
        retention_s = self.settings.idempotency_retention_s
        while True:
            await asyncio.sleep(interval_s)
            try:
                records = await self.idempotency.purge_expired()
                tokens = await self.two_phase.tokens.purge_finished(retention_s=retention_s)
            except Exception:  # the store may be briefly unavailable; the next round retries
                logger.exception("purging expired idempotency records and commit tokens failed")
                continue
            if records or tokens:
                logger.info("purged %d idempotency records and %d commit tokens", records, tokens)

    async def aclose(self) -> None:
        await self.calls.pipeline.drain()
        await self.catalog.drain()
        self.tool_index.close()
        await self.feedback.aclose()
        await self.health.aclose()
        await self.idempotency.aclose()
        await self.http.aclose()
        await self.engine.dispose()
        self.tracer_provider.shutdown()
