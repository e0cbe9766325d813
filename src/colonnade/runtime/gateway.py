"""The composition root: one object that builds the gateway from its parts, the one way it is built.

`Gateway(settings, engine=..., catalog=..., ...)` assembles the catalog, adapters, pipeline and
surfaces; any part may be given (tests give a catalog they published into, an adapter, a
monitor), the rest are built from the settings. Without a database engine the gateway runs its
stateless parts only (no idempotency store, no two-phase commit, no contract store, no audit
log): enough for surface and pipeline tests. Governance (authentication, authorization, audit)
is assembled by `runtime/governance.py` and wired in here. `await Gateway.open(settings)` is the
production path: it creates and migrates the database, publishes the configured contracts and
loads the catalog.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette

from colonnade._version import __version__
from colonnade.adapters.builtin import BuiltinAdapter
from colonnade.adapters.credentials import TokenExchange, UpstreamCredentials
from colonnade.adapters.discovery_tools import DiscoveryTools
from colonnade.adapters.health_monitor import HealthMonitor
from colonnade.adapters.http import HttpAdapter
from colonnade.adapters.http.tools import HttpTools
from colonnade.adapters.mcp.tools import McpTools
from colonnade.adapters.organ import OrganAdapter
from colonnade.adapters.pathway import PathwayAdapter
from colonnade.adapters.registry import AdapterRegistry
from colonnade.adapters.secrets import EnvSecretResolver, SecretResolver
from colonnade.calls.approvals import ApprovalCoordinator
from colonnade.calls.commit_tool import COMMIT_TOOL, DISCARD_TOOL, CommitHandler, DiscardHandler
from colonnade.calls.default_pipeline import PipelineParts, build_pipeline
from colonnade.calls.manifest import Manifests
from colonnade.calls.parking import ParkedCalls
from colonnade.calls.resume_authority import ResumeAuthority
from colonnade.calls.service import CallService
from colonnade.calls.skip_tool import SKIP_TOOL, SkipHandler
from colonnade.calls.stages.circuit import CircuitBreaker
from colonnade.calls.stages.guardrails import Guardrails
from colonnade.calls.stages.observe import Observe
from colonnade.calls.two_phase import TwoPhaseCoordinator
from colonnade.catalog.builtins import BuiltinTools
from colonnade.catalog.catalog import Catalog, CatalogChange
from colonnade.config import Settings
from colonnade.governance.audit import AuditEvent, EventKind
from colonnade.governance.audit.readers import AuditReach, audit_reach
from colonnade.governance.authorization import Authorizer
from colonnade.governance.flow import FlowLabels
from colonnade.governance.identity.exposure import refuse_unprotected_bind
from colonnade.governance.limits import Limiter
from colonnade.governance.principal import Principal
from colonnade.governance.tool_lookup import CatalogReach
from colonnade.observability.metrics import GatewayMetrics
from colonnade.observability.metrics_history import HistoryFlusher, MetricsRollup
from colonnade.observability.routing_turns import RoutingTurns, TurnsFlusher
from colonnade.observability.telemetry import Telemetry
from colonnade.observability.trace_event_log import TraceEventLog, build_event_log
from colonnade.observability.trace_events import (
    DownstreamConnected,
    DownstreamDisconnected,
    RouterFallback,
    ToolsListed,
)
from colonnade.observability.tracing import TRACER_NAME, records_spans
from colonnade.organs.executive import Executive
from colonnade.organs.loading import OrganHost
from colonnade.platform import CORE_TOOLS, PlatformAccess, PlatformServices, core_handlers
from colonnade.platform.alerts import AlertRules
from colonnade.platform.changes import ResourceChanges
from colonnade.platform.resources import catalog_uris
from colonnade.platform.usage import CallFigures
from colonnade.routing.catalog_index import CatalogIndex
from colonnade.routing.learning import CallFeedback, CoOccurrence
from colonnade.routing.router import Router, RoutingDecision
from colonnade.runtime.governance import Governance
from colonnade.runtime.organ_sources import ORGAN_SOURCE, load_organ_sources
from colonnade.runtime.publish_gate import check_compatible
from colonnade.runtime.replication import share_changes
from colonnade.runtime.servers import Servers
from colonnade.runtime.sources import expand_contract_paths, load_for_publishing
from colonnade.runtime.sync import CatalogSync
from colonnade.runtime.tool_admission import APPROVALS_NEEDED, ToolAdmission
from colonnade.runtime.upstream_accounts import UpstreamAccounts, user_oauth_service
from colonnade.shared_state import SharedState
from colonnade.shared_state.topics import CATALOG_CHANGED
from colonnade.store.alerts_repo import AlertStore
from colonnade.store.co_occurrence_repo import CoOccurrenceStore
from colonnade.store.contracts_repo import ContractStore
from colonnade.store.engine import create_store_engine
from colonnade.store.error_snapshots_repo import ErrorSnapshotStore
from colonnade.store.idempotency_repo import IdempotencyStore
from colonnade.store.metrics_history_repo import MetricsHistoryStore
from colonnade.store.migrator import migrate_engine
from colonnade.store.parked_calls_repo import ParkedCallStore
from colonnade.store.routing_turns_repo import RoutingTurnStore
from colonnade.surfaces.app import HttpSurfaces, build_http_app
from colonnade.surfaces.edge import OPEN_PATHS, OriginPolicy
from colonnade.surfaces.edge_auth import edge_authenticator
from colonnade.surfaces.mcp.caller import caller_scope, principal_of
from colonnade.surfaces.mcp.proxy.aggregate import AggregateResources
from colonnade.surfaces.mcp.proxy.endpoint import UpstreamEndpoint
from colonnade.surfaces.mcp.proxy.endpoints import UpstreamEndpoints
from colonnade.surfaces.mcp.proxy.served_upstream import ServedUpstream
from colonnade.surfaces.mcp.routing import DynamicToolList
from colonnade.surfaces.mcp.server import McpSurface
from colonnade.surfaces.mcp.session_records import SessionRecords
from colonnade.surfaces.mcp.sessions import SessionLedger, SessionLimits
from colonnade.surfaces.metrics_route import metrics_route
from colonnade.surfaces.oauth_routes import metadata_paths, oauth_routes
from colonnade.surfaces.pages import routes as page_routes
from colonnade.surfaces.pages.access_view import AccessView
from colonnade.surfaces.pages.admissions_view import AdmissionsView
from colonnade.surfaces.pages.approvals_view import ApprovalsView
from colonnade.surfaces.pages.audit_view import AuditView
from colonnade.surfaces.pages.connections_view import ConnectionsView
from colonnade.surfaces.pages.contracts_view import ContractsView
from colonnade.surfaces.pages.login import Login
from colonnade.surfaces.pages.policies_view import PoliciesView
from colonnade.surfaces.pages.servers_view import ServersView
from colonnade.surfaces.pages.session_auth import with_page_sessions
from colonnade.surfaces.pages.sessions import PageSessions
from colonnade.surfaces.pages.try_tool import TryTool
from colonnade.surfaces.rest.admission_routes import AdmissionRoutes
from colonnade.surfaces.rest.approval_routes import ApprovalRoutes
from colonnade.surfaces.rest.governance_routes import GovernanceRoutes
from colonnade.surfaces.rest.policy_routes import PolicyRoutes
from colonnade.surfaces.rest.routes import RestSurface
from colonnade.surfaces.rest.secret_routes import SecretRoutes
from colonnade.surfaces.rest.servers import ServersApi
from colonnade.surfaces.rest.tool_search import ToolSearch
from colonnade.surfaces.rest.trace_event_routes import TraceEventRoutes
from colonnade.surfaces.token_routes import TOKEN_PATHS, token_routes

__all__ = ["Gateway", "PublishedFile"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishedFile:
    path: Path
    label: str
    tools: int


class Gateway:
    """Build with `await Gateway.open(settings)` (or from parts, in tests); close with `aclose()`."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        engine: AsyncEngine | None = None,
        catalog: Catalog | None = None,
        http: HttpAdapter | None = None,
        health: HealthMonitor | None = None,
        authorizer: Authorizer | None = None,
        metrics: GatewayMetrics | None = None,
        manifests: Manifests | None = None,
        tracer_provider: TracerProvider | None = None,
        audit_calls: bool = True,
        organs: OrganHost | None = None,
        shared: SharedState | None = None,
    ) -> None:
        """`audit_calls=False` leaves the audit stage out of the pipeline: only for tests of other
        stages under store faults, where the audit log (rightly) fails every call closed."""
        settings = settings if settings is not None else Settings()
        self.settings = settings
        self.engine = engine
        # What replicas share beyond the database: Redis when `shared_state.redis_url` names one.
        self.shared = (
            shared
            if shared is not None
            else SharedState(settings.shared_state, heartbeat_s=settings.limits.heartbeat_s)
        )
        # Rate limits count in Redis when the replicas share it, in this process otherwise.
        self.limiter = Limiter(
            settings.limits,
            shared=self.shared.counters if self.shared.link is not None else None,
            replicas=self.shared.replicas,
            shared_available=lambda: self.shared.link is None or self.shared.link.available,
        )
        self.catalog = catalog if catalog is not None else Catalog(profile=settings.wire_profile)
        self.governance = Governance(settings, self.catalog, engine, authorizer, changes=self.shared.fanout)
        self.http = http if http is not None else HttpAdapter(secrets=self.governance.secrets)
        self.health = health if health is not None else HealthMonitor(interval_s=settings.health_interval_s)
        # The platform's core tools by ADR-012's persona matrix, every other tool by governance's rules.
        self.platform_tools = settings.platform.served(settings.auth.configured)
        self.alert_rules: AlertRules | None = None
        self.resource_changes = ResourceChanges() if self.platform_tools else None
        core = CORE_TOOLS if self.platform_tools else ()
        self.authorizer: Authorizer = PlatformAccess(self.governance.authorizer, core)
        self.metrics = metrics if metrics is not None else GatewayMetrics()
        self.metrics.track_limits(self.limiter)
        self.metrics.track_catalog(self.catalog)
        self.metrics.track_consumers(
            settings.telemetry.consumer_labels, max_values=settings.telemetry.consumer_label_values_max
        )
        self.manifests = manifests if manifests is not None else Manifests.from_folder(settings.manifests_dir)
        # Spans and metrics leave the process only when `telemetry:` (or OTEL_*) names a collector.
        self.telemetry = (
            Telemetry(tracer_provider)
            if tracer_provider is not None
            else Telemetry.build(settings.telemetry, self.metrics.registry)
        )
        self.tracer_provider = self.telemetry.tracer_provider
        # Typed trace events (calls, listings, router fallbacks, downstream sessions): the last
        # `telemetry.events_keep` in memory for /v1/status, and the sinks `telemetry:` names.
        self.events = build_event_log(settings.telemetry)
        local = settings.local_principal
        self.local_principal = Principal.local(local.id, tenant=local.tenant, persona=local.persona)

        # Downstream MCP servers: one pooled session each, their tools served as catalog sources.
        servers_tracer = self.tracer_provider.get_tracer("colonnade.servers")
        audit = self.governance.audit
        admission = ToolAdmission(
            settings.data_dir / "admission" if engine is not None else None,
            audit=audit.append if audit is not None else None,
        )
        self.servers = Servers(
            self.catalog,
            secrets=self.governance.secrets,
            profile=settings.wire_profile,
            tracer=servers_tracer,
            changes=self.shared.fanout,
            admission=admission,
        )
        self.servers.pool.on_connection = self._downstream_connection
        self.servers.pool.hidden = (settings.data_dir.resolve(),)
        self.metrics.track_sandboxes(self.servers.pool)
        for server in settings.servers:
            self.servers.configure(server)
        # Organs (in-process Python modules): served from their cards, imported on their first call.
        organ_sources = load_organ_sources(
            settings.organs, data_dir=settings.data_dir, profile=settings.wire_profile, host=organs
        )
        if organ_sources.tools:
            self.catalog.add_tools(ORGAN_SOURCE, organ_sources.tools)

        # The router: the embedded default keeps its index under data_dir; co-occurrence is in the database.
        on_disk = engine is not None and settings.database_url is None
        self.tool_index = CatalogIndex(
            self.catalog, directory=settings.data_dir / "routing" if on_disk else None
        )
        repository = CoOccurrenceStore(engine) if engine is not None else None
        self.feedback = CallFeedback(CoOccurrence(), repository=repository)
        self.router = Router.from_settings(
            settings.routing, self.tool_index.corpus, learning=self.feedback.learned
        )
        routing_metrics = self.metrics.track_routing()
        # Routed listings and the calls after them (the routing page, precision/recall, usage export).
        self.routing_turns = RoutingTurns(routing_metrics)
        self.turn_store = RoutingTurnStore(engine) if engine is not None else None
        self.turns_flusher = (
            TurnsFlusher(self.routing_turns, self.turn_store, interval_s=settings.telemetry.history_flush_s)
            if self.turn_store is not None
            else None
        )

        def observe_decision(decision: RoutingDecision, seconds: float) -> None:
            routing_metrics.record(
                fallback=decision.fallback_used,
                confidence=decision.confidence,
                tools=len(decision.selected),
                seconds=seconds,
            )
            if self.events is not None:
                self._decision_events(self.events, decision, seconds)

        self.router.observer = observe_decision

        # The gateway's own tools and the adapters, by binding kind.
        self.builtins = BuiltinTools()
        builtin = BuiltinAdapter()
        if settings.routing.enabled:
            reach = CatalogReach(self.catalog, self.authorizer)
            discovery = DiscoveryTools(self.catalog, self.router, reach)
            for tool, handler in zip(discovery.tools, (discovery.search, discovery.describe), strict=True):
                self.builtins.add(tool)
                builtin.register(tool.operation, handler)
        self.executive = Executive(
            organ_sources.host, tenant=settings.organs.tenant, corpus=self.tool_index.corpus
        )
        self.executive.add_pathways(organ_sources.pathways)
        self.upstream_credentials = upstream_credentials(settings, engine, self.governance.secrets)
        self.upstream_accounts = upstream_accounts(self.upstream_credentials, self.governance, self.shared)
        self.adapters = AdapterRegistry(
            {
                "http": HttpTools(self.http, self.upstream_credentials),
                "builtin": builtin,
                "mcp": McpTools(
                    self.servers.pool, tracer=servers_tracer, credentials=self.upstream_credentials
                ),
                "organ": OrganAdapter(organ_sources.host),
                "pathway": PathwayAdapter(self.executive),
            }
        )

        # State that lives in the database, when there is one.
        self.store = ContractStore(engine) if engine is not None else None
        self.idempotency = IdempotencyStore(engine) if engine is not None else None
        self.parked = ParkedCalls(ParkedCallStore(engine)) if engine is not None else None
        self.snapshots = ErrorSnapshotStore(engine) if engine is not None and self.platform_tools else None
        # Who may commit, discard or resume a parked call: judged by the pipeline's own authorization.
        authority = ResumeAuthority(self.catalog, self.authorizer, self.governance.policy, self.manifests)
        self.two_phase = (
            TwoPhaseCoordinator(self.catalog, self.parked, authority) if self.parked is not None else None
        )
        if self.two_phase is not None:
            self.builtins.add(COMMIT_TOOL)
            builtin.register(COMMIT_TOOL.operation, CommitHandler(self.two_phase))
            self.builtins.add(DISCARD_TOOL)
            builtin.register(DISCARD_TOOL.operation, DiscardHandler(self.two_phase))
        if self.governance.audit is not None:
            # An agent's "I skipped this step, because ..." goes into the same audit chain as its calls.
            # Listed with the platform's tools (when authentication is configured, by default), so
            # that a local gateway's listing stays its APIs' tools; callable by name always.
            self.builtins.add(SKIP_TOOL, listed=bool(self.platform_tools))
            builtin.register(SKIP_TOOL.operation, SkipHandler(self.governance.audit))
        desk = self.governance.approvals
        if desk is not None:
            desk.observer = self.metrics.track_approvals().record
        self.approvals = (
            ApprovalCoordinator(
                desk,
                self.parked,
                request_ttl_s=settings.approvals.request_ttl_s,
                standing=self.governance.standing,
            )
            if self.parked is not None and desk is not None
            else None
        )
        self.sync = (
            CatalogSync(self.store, self.catalog, interval_s=settings.catalog_poll_s) if self.store else None
        )
        # The rolled-up metrics history (per tool and API): added to by each call, flushed in the background.
        self.history_store = (
            MetricsHistoryStore(engine, self.shared.replica_id) if engine is not None else None
        )
        self.history = (
            HistoryFlusher(MetricsRollup(), self.history_store, interval_s=settings.telemetry.history_flush_s)
            if self.history_store is not None
            else None
        )
        if self.platform_tools:
            self._serve_platform(builtin)

        self.observe = Observe(
            self.metrics,
            self.tracer_provider.get_tracer(TRACER_NAME),
            events=self.events,
            history=self.history.rollup if self.history is not None else None,
        )
        self.circuits = CircuitBreaker()
        self.pipeline = build_pipeline(
            PipelineParts(
                catalog=self.catalog,
                adapters=self.adapters,
                manifests=self.manifests,
                builtins=self.builtins,
                authorizer=self.authorizer,
                observe=self.observe,
                idempotency=self.idempotency,
                idempotency_retention_s=settings.idempotency_retention_s,
                two_phase=self.two_phase,
                health=self.health,
                audit=self.governance.audit if audit_calls else None,
                approvals=self.approvals,
                policy=self.governance.policy,
                attestation=self.governance.attestation,
                circuit=self.circuits,
                limiter=self.limiter,
                snapshots=self.snapshots,
                guardrails=Guardrails(
                    settings.guardrails,
                    FlowLabels(self.shared.values, ttl_s=settings.flow.session_s)
                    if settings.flow.enabled
                    else None,
                    approve_egress_after_untrusted=settings.flow.approve_egress_after_untrusted,
                ),
            )
        )
        self.calls = CallService(self.pipeline)
        if self.two_phase is not None:
            self.two_phase.bind(self.calls.call)
        if self.approvals is not None:
            self.approvals.bind(self.calls.call)
        routing = (
            DynamicToolList(
                self.catalog,
                self.router,
                settings.routing,
                feedback=self.feedback,
                scope=caller_scope(self.authorizer, self.local_principal),
                values=self.shared.values if self.shared.link is not None else None,
                caller=lambda ctx: principal_of(ctx, self.local_principal).key,
                turns=self.routing_turns,
                principal=lambda ctx: principal_of(ctx, self.local_principal),
            )
            if settings.routing.enabled
            else None
        )
        self.mcp = self.mcp_surface(self.local_principal, routing=routing)
        edge = settings.server
        limits = SessionLimits(
            per_caller=edge.max_mcp_sessions_per_caller,
            total=edge.max_mcp_sessions,
            idle_s=edge.mcp_session_idle_s,
        )
        # Behind a balancer, any replica serves a handshake-era session (its record in Redis).
        records = (
            SessionRecords(
                self.shared.values, self.shared.fanout, ttl_s=limits.idle_s, replica_id=self.shared.replica_id
            )
            if self.shared.link is not None
            else None
        )
        self.sessions = SessionLedger(limits, records=records)
        self.metrics.track_sessions(self.sessions)
        self.endpoints = UpstreamEndpoints(self.servers.get, self._endpoint_for)
        self.servers.listeners.append(self.endpoints.announce)
        # Changes made on other replicas, applied here; changes seen on the call path, published.
        share_changes(self)

    @staticmethod
    def _decision_events(events: TraceEventLog, decision: RoutingDecision, seconds: float) -> None:
        query = decision.query_used[:200]
        events.emit(
            ToolsListed(
                query=query,
                selected=tuple(decision.selected),
                confidence=decision.confidence,
                fallback_used=decision.fallback_used,
                duration_ms=round(seconds * 1000, 3),
            )
        )
        if decision.fallback_used:
            events.emit(
                RouterFallback(query=query, confidence=decision.confidence, reason=decision.confidence_note)
            )

    def _downstream_connection(self, server: str, up: bool, details: dict[str, Any]) -> None:
        if self.events is None:
            return
        if up:
            self.events.emit(
                DownstreamConnected(server=server, protocol_version=details.get("protocol_version"))
            )
        else:
            self.events.emit(DownstreamDisconnected(server=server, reason=str(details.get("reason", ""))))

    def _serve_platform(self, builtin: BuiltinAdapter) -> None:
        """The core tools (ADR-012), run by the builtin adapter over the gateway's services."""
        governance = self.governance
        services = PlatformServices(
            settings=self.settings,
            catalog=self.catalog,
            authorizer=self.authorizer,
            builtins=self.builtins,
            metrics=self.metrics,
            status=self.status,
            contracts=self.store,
            refresh=self.sync.refresh if self.sync is not None else None,
            audit=governance.audit,
            keys=governance.key_admin,
            agents=governance.agent_admin,
            subscriptions=governance.subscription_admin,
            changes=self.resource_changes,
            snapshots=self.snapshots,
            history=self.history_store,
        )
        if self.engine is not None:
            self.alert_rules = AlertRules(services, AlertStore(self.engine), self.manifests)
            services = dataclasses.replace(services, alerts=self.alert_rules)
        self.catalog.subscribe(self._catalog_resources_changed)
        for core, handler in core_handlers(services):
            self.builtins.add(core.tool)
            builtin.register(core.tool.operation, handler)

    async def _catalog_resources_changed(self, change: CatalogChange) -> None:
        """The served catalog changed (here or in another process): update the resources that show it."""
        if self.resource_changes is not None:
            apis = {f"{tool.tenant}:{tool.api}" for tool in (*change.added, *change.removed, *change.updated)}
            await self.resource_changes.publish(catalog_uris(apis))

    def _endpoint_for(self, upstream: ServedUpstream) -> UpstreamEndpoint:
        """A server's own endpoint (`/servers/{name}/mcp`): its calls run the pipeline like any other."""
        return UpstreamEndpoint(
            upstream,
            self.servers.pool,
            self.calls,
            authorizer=self.authorizer,
            principal=self.local_principal,
            sessions=self.sessions,
            plain_calls=self.settings.server.mcp_plain_calls,
            sdk_spans=records_spans(self.tracer_provider.get_tracer(TRACER_NAME)),
            admitted=self.servers.admitted,
        )

    def mcp_surface(self, principal: Principal, *, routing: DynamicToolList | None = None) -> McpSurface:
        """The MCP surface; `principal` is who calls when no HTTP edge says otherwise (stdio)."""
        return McpSurface(
            self.catalog,
            self.calls,
            page_size=self.settings.server.page_size,
            builtins=self.builtins,
            routing=routing,
            principal=principal,
            authorizer=self.authorizer,
            approvals=self.governance.approvals,
            sdk_spans=records_spans(self.tracer_provider.get_tracer(TRACER_NAME)),
            platform=self.resource_changes,
            servers=self._served_resources(),
        )

    def _served_resources(self) -> AggregateResources | None:
        """The downstream servers' resources and prompts on `/mcp`, when the gateway has servers."""
        if not self.settings.servers and not self.settings.server.admin_api:
            return None
        served = AggregateResources(
            lambda: [entry["name"] for entry in self.servers.status()],
            lambda name: self.endpoints.endpoint(name),  # built after the surface
            self.settings.wire_profile,
        )
        self.servers.listeners.append(served.server_event)  # watched resources' updates, on /mcp
        return served

    @classmethod
    async def open(cls, settings: Settings, *, engine: AsyncEngine | None = None) -> Gateway:
        """Migrate the database, publish the configured contracts and load the catalog; `engine` is one
        the caller made (a replica of a test on a private PostgreSQL schema), disposed with the gateway."""
        engine = engine if engine is not None else create_store_engine(settings.effective_database_url)
        try:
            await migrate_engine(engine)
        except BaseException:
            await engine.dispose()
            raise
        try:
            gateway = cls(settings, engine=engine)
        except BaseException:
            await engine.dispose()
            raise
        await gateway.shared.start()
        await gateway.governance.refresh()
        await gateway.feedback.load()
        await gateway.publish_files(settings.contracts)
        gateway.tool_index.reconcile()
        return gateway

    async def publish_files(self, paths: Sequence[Path]) -> list[PublishedFile]:
        """Validate, store as published and serve each contract file (folders are expanded); a new
        version that breaks callers of the previous one without a major bump raises ContractInvalid."""
        if self.store is None or self.sync is None:
            raise RuntimeError("this gateway has no database: build it with an engine to publish contracts")
        published = []
        for path in expand_contract_paths(paths):
            contract = load_for_publishing(path)
            await check_compatible(self.store, contract, str(path))
            stored = await self.store.save(contract)
            change = self.catalog.publish(stored.contract())
            published.append(PublishedFile(path, stored.label, len(change.added) + len(change.updated)))
            if self.governance.audit is not None:
                event = AuditEvent.by(
                    Principal.system("configured-contracts"),
                    EventKind.CONTRACT_PUBLISH,
                    tenant=contract.tenant,
                    details={"api": contract.name, "version": contract.version, "file": path.name},
                )
                await self.governance.audit.append(event)
        await self.sync.refresh()
        if published:
            await self.shared.fanout.publish(CATALOG_CHANGED, {"files": len(published)})
        return published

    async def readiness(self) -> dict[str, Any]:
        checks: dict[str, Any] = {}
        if self.engine is not None:
            try:
                async with self.engine.connect() as conn:
                    await conn.execute(text("SELECT 1"))
                checks["database"] = {"ok": True}
            except Exception as exc:  # readiness reports, it never raises
                checks["database"] = {"ok": False, "error": str(exc)}
        checks["catalog"] = {"ok": True, "tools": len(self.catalog)}
        return checks

    async def status(self) -> dict[str, Any]:
        """`colonnade status` and `GET /v1/status`: the catalog, each server, what the router learned."""
        return {
            "version": __version__,
            "tools": len(self.catalog),
            "catalog_version": self.catalog.version,
            "servers": self.servers.status(),
            "routing": {
                "enabled": self.settings.routing.enabled,
                "tools_with_learned_co_occurrence": len(self.feedback.learned),
            },
            "policy": self.governance.policy.status() if self.governance.policy is not None else None,
            "shared_state": self._shared_status(),
            "trace_events": self.events.status() if self.events is not None else None,
            "limits": self.limiter.status(),
            "checks": await self.readiness(),
        }

    def _shared_status(self) -> dict[str, Any]:
        status = self.shared.status()
        if self.sessions.records is not None:
            status["mcp_sessions"] = self.sessions.records.status()
        return status

    def http_app(self) -> Starlette:
        """Every HTTP surface behind the edge; an unauthenticated gateway is never exposed beyond loopback."""
        refuse_unprotected_bind(self.settings)
        server = self.settings.server
        governance = self.governance
        rest = RestSurface(
            self.catalog,
            self.calls,
            page_size=server.page_size,
            max_body_bytes=server.max_request_bytes,
            authorizer=self.authorizer,
        )
        login, edge_auth = None, None
        if governance.authenticator is not None and governance.resource is not None:
            edge_auth = edge_authenticator(governance.authenticator, governance.resource)
            login = Login(edge_auth, PageSessions(self.settings.auth.page_session_s, self.shared.values))
        admissions = AdmissionsView(
            self.servers, admin_api=server.admin_api, approvals_needed=APPROVALS_NEEDED
        )
        pages = page_routes(
            self.catalog,
            self.router,
            self.metrics,
            manifests=self.manifests,
            authorizer=self.authorizer,
            login=login,
            audit=AuditView(governance.audit, audit_reach if login is not None else _every_record),
            approvals=(
                ApprovalsView(self.approvals, tools_waiting=admissions.waiting)
                if self.approvals is not None
                else None
            ),
            events=self.events,
            admissions=admissions,
            access=AccessView(governance.key_admin, governance.agent_admin, governance.subscription_admin),
            trials=TryTool(self.catalog, self.calls, self.authorizer, self.manifests),
            policies=PoliciesView(governance.policy, governance.reload_policy),
            contracts=ContractsView(self.calls, served=bool(self.platform_tools)),
            servers=ServersView(self.servers, admin_api=server.admin_api),
            figures=CallFigures(
                self.catalog,
                self.authorizer,
                self.history_store,
                governance.audit,
                governance.subscription_admin,
                self.turn_store,
                unauthenticated=login is None,
            ),
        )
        servers = ServersApi(
            self.servers, self.status, admin_api=server.admin_api, max_body_bytes=server.max_request_bytes
        )
        admin = GovernanceRoutes(governance.key_admin, governance.agent_admin, governance.subscription_admin)
        routes = [
            *rest.routes(),
            *ToolSearch(self.catalog, self.router, self.authorizer).routes(),
            *admin.routes(),
            *(SecretRoutes(governance.secret_admin).routes() if governance.secret_admin is not None else ()),
            *(ApprovalRoutes(self.approvals).routes() if self.approvals is not None else ()),
            *PolicyRoutes(governance.policy, governance.reload_policy).routes(),
            *servers.routes(),
            *TraceEventRoutes(self.events).routes(),
            *AdmissionRoutes(
                self.servers, admin_api=server.admin_api, max_body_bytes=server.max_request_bytes
            ).routes(),
            *self.endpoints.routes(),
            metrics_route(self.metrics),
            *pages,
            *(ConnectionsView(self.upstream_accounts).routes() if self.upstream_accounts is not None else ()),
        ]
        open_paths, authenticate = OPEN_PATHS, None
        if edge_auth is not None and login is not None and governance.resource is not None:
            resource = governance.resource
            issuers = [issuer.issuer for issuer in self.settings.auth.issuers]
            if governance.token_exchange is not None:
                issuers.append(governance.token_exchange.issuer)
            routes += oauth_routes(
                resource,
                issuers,
                governance.agent_admin,
                registration=self.settings.auth.dynamic_registration,
                certificate_bound=server.tls.client_cert != "none",
            )
            open_paths = OPEN_PATHS | metadata_paths(resource)
            exchange, signer = governance.token_exchange, governance.delegation_signer
            if exchange is not None and signer is not None:
                routes += token_routes(exchange, signer.public_jwks())
                open_paths |= TOKEN_PATHS
            authenticate = with_page_sessions(edge_auth, login.sessions)
        surfaces = HttpSurfaces(
            self.mcp,
            routes=routes,
            direct_match=self.endpoints.direct_match,
            readiness=self.readiness,
            lifespan=self._background,
            direct=rest.direct(),
        )
        origins = OriginPolicy.for_bind(server.host, server.allowed_hosts, server.allowed_origins)
        return build_http_app(
            surfaces,
            origins=origins,
            max_request_bytes=server.max_request_bytes,
            authenticate=authenticate,
            open_paths=open_paths,
            sessions=self.sessions,
            session_streams=server.mcp_session_streams,
            plain_calls=server.mcp_plain_calls,
        )

    @contextlib.asynccontextmanager
    async def _background(self) -> AsyncIterator[None]:
        """Downstream servers and their endpoints, catalog sync, the parked calls' sweep, backend health
        probes, governance refresh, record expiry and the learned co-occurrence, while serving."""
        self.servers.start()
        tasks = [
            asyncio.create_task(self.health.run(), name="colonnade-health"),
            asyncio.create_task(self.governance.run(), name="colonnade-governance-refresh"),
        ]
        if self.sync is not None:
            tasks.append(asyncio.create_task(self.sync.run(), name="colonnade-catalog-sync"))
        if self.governance.policy is not None:
            tasks.append(asyncio.create_task(self.governance.policy.run(), name="colonnade-policy-reload"))
        if self.parked is not None:
            tasks.append(asyncio.create_task(self.parked.run(), name="colonnade-parked-calls-sweep"))
        if self.idempotency is not None:
            tasks.append(asyncio.create_task(self._purge_expired(), name="colonnade-idempotency-expiry"))
        if self.feedback.repository is not None:
            tasks.append(asyncio.create_task(self._load_learned(), name="colonnade-co-occurrence-load"))
        if self.history is not None:
            tasks.append(asyncio.create_task(self.history.run(), name="colonnade-metrics-history"))
        if self.turns_flusher is not None:
            tasks.append(asyncio.create_task(self.turns_flusher.run(), name="colonnade-routing-turns"))
        if self.alert_rules is not None:
            every = self.settings.platform.alert_interval_s
            tasks.append(asyncio.create_task(self.alert_rules.run(every), name="colonnade-alert-rules"))
        try:
            async with self.shared.running(), self.endpoints.running():
                yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _load_learned(self) -> None:
        """Co-occurrence the other replicas learned, loaded every `routing.learned_reload_s` (fallback)."""
        while True:
            await asyncio.sleep(self.settings.routing.learned_reload_s)
            await self.feedback.load()  # logs and keeps the counts it has when the database is away

    async def _purge_expired(self, interval_s: float = 60.0) -> None:
        """Keep the store bounded: records past retention, one round every `interval_s`."""
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.purge_round()
            except Exception:  # the store may be briefly unavailable; the next round retries
                logger.exception("purging expired idempotency records, parked calls and approvals failed")

    async def purge_round(self, now: datetime | None = None) -> tuple[int, int, int]:
        """Delete idempotency records, finished parked calls and finished approvals past retention.

        Returns how many of each went; `now` (a test clock) moves the approvals' cutoff.
        """
        retention_s = self.settings.idempotency_retention_s
        records = await self.idempotency.purge_expired() if self.idempotency is not None else 0
        parked = (
            await self.parked.store.purge_finished(retention_s=retention_s) if self.parked is not None else 0
        )
        desk = self.governance.approvals
        approvals = (
            await desk.store.purge_finished(retention_s=self.settings.approvals.retention_s, now=now)
            if desk is not None
            else 0
        )
        if self.snapshots is not None:
            cutoff = (now or datetime.now(UTC)) - timedelta(seconds=retention_s)
            await self.snapshots.purge_older(cutoff)
        if records or parked or approvals:
            logger.info(
                "purged %d idempotency records, %d parked calls and %d approvals", records, parked, approvals
            )
        return records, parked, approvals

    async def aclose(self) -> None:
        await self.pipeline.drain()
        if self.history is not None:
            try:
                await self.history.flush()  # calls made without the background loop (tests, CLI)
            except Exception:
                logger.warning("the metrics history's last round was not written at close")
        if self.turns_flusher is not None:
            try:
                await self.turns_flusher.flush()
            except Exception:
                logger.warning("the last routing turns were not written at close")
        if self.snapshots is not None:
            await self.snapshots.drain()
        await self.servers.aclose()
        await self.catalog.drain()
        self.tool_index.close()
        await self.feedback.aclose()
        await self.health.aclose()
        if self.idempotency is not None:
            await self.idempotency.aclose()
        await self.adapters.aclose()
        await self.upstream_credentials.aclose()
        await self.governance.aclose()
        await self.shared.aclose()
        if self.engine is not None:
            await self.engine.dispose()
        if self.events is not None:
            await asyncio.to_thread(self.events.close)
        await asyncio.to_thread(self.telemetry.shutdown)  # a last export: never on the event loop


def _every_record(_: Principal) -> AuditReach:
    """Without authentication the gateway serves loopback only: its user reads the whole log (as the CLI)."""
    return AuditReach(None)


def upstream_credentials(
    settings: Settings, engine: AsyncEngine | None = None, secrets: SecretResolver | None = None
) -> UpstreamCredentials:
    """The per-caller upstream credentials (forward; exchange when `token_exchange` is set; user_oauth
    when `upstream_oauth` names providers)."""
    exchange = settings.token_exchange
    resolver = secrets if secrets is not None else EnvSecretResolver()
    return UpstreamCredentials(
        TokenExchange(exchange, resolver) if exchange is not None else None,
        user_oauth_service(settings, engine, resolver),
    )


def upstream_accounts(
    credentials: UpstreamCredentials, governance: Governance, shared: SharedState
) -> UpstreamAccounts | None:
    """The per-user grants' end with their user: a revoked key or agent deletes its grants."""
    if credentials.user_oauth is None:
        return None
    accounts = UpstreamAccounts(credentials.user_oauth, shared.fanout)
    if governance.key_admin is not None:
        governance.key_admin.on_revoke = accounts.key_revoked
    if governance.agent_admin is not None:
        governance.agent_admin.on_revoke = accounts.agent_revoked
    return accounts
