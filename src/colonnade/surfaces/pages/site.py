"""The pages as Starlette routes, rendered in a worker thread (the HTTP edge checked Host/Origin).

Rendering runs off the event loop (as `/metrics` does): with thousands of tools a catalog page
or a read of every metric series is enough work to delay calls in flight. Every page shows only
the tools the gateway's authorizer lets the visitor see; a hidden tool's page is the 404 page.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from colonnade.calls.manifest import Manifests
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.tool import Tool
from colonnade.governance.authorization import AllowAll, Authorizer, tool_filter
from colonnade.governance.operators import OPERATOR_SCOPE, may_read_trace_events
from colonnade.governance.tool_lookup import find_tool
from colonnade.observability.metrics import GatewayMetrics
from colonnade.observability.trace_event_log import TraceEventLog
from colonnade.observability.trace_events import EVENT_KINDS
from colonnade.platform.metric_values import read_stats
from colonnade.platform.usage import WINDOWS, CallFigures
from colonnade.routing.router import Router
from colonnade.surfaces.edge import principal_of_scope
from colonnade.surfaces.pages.access_view import AccessView
from colonnade.surfaces.pages.admissions_view import AdmissionsView
from colonnade.surfaces.pages.approvals_view import ApprovalsView
from colonnade.surfaces.pages.audit_view import AuditView
from colonnade.surfaces.pages.catalog_page import Visible, catalog_page
from colonnade.surfaces.pages.contracts_view import ContractsView
from colonnade.surfaces.pages.events_page import events_page, events_problem_page
from colonnade.surfaces.pages.forms import visitor_of
from colonnade.surfaces.pages.history_charts import history_charts
from colonnade.surfaces.pages.html import Html
from colonnade.surfaces.pages.layout import (
    AUDIT_PATH,
    CATALOG_PATH,
    EVENTS_PATH,
    LOGIN_PATH,
    METRICS_PATH,
    ROUTING_PATH,
    TOOLS_PATH,
    USAGE_PATH,
    page_response,
)
from colonnade.surfaces.pages.login import Login
from colonnade.surfaces.pages.metrics_page import metrics_page, metrics_problem_page
from colonnade.surfaces.pages.policies_view import PoliciesView
from colonnade.surfaces.pages.routing_page import routing_page, routing_problem_page
from colonnade.surfaces.pages.servers_view import ServersView
from colonnade.surfaces.pages.table_paging import parse_page
from colonnade.surfaces.pages.tool_page import tool_page, unknown_tool_page
from colonnade.surfaces.pages.try_tool import TryTool, try_part
from colonnade.surfaces.pages.usage_page import usage_page, usage_problem_page

__all__ = ["Pages", "routes"]


class Pages:
    """The pages of one gateway, over the parts it already owns."""

    def __init__(
        self,
        catalog: Catalog,
        router: Router,
        metrics: GatewayMetrics,
        *,
        manifests: Manifests | None = None,
        authorizer: Authorizer | None = None,
        login: Login | None = None,
        audit: AuditView | None = None,
        approvals: ApprovalsView | None = None,
        events: TraceEventLog | None = None,
        admissions: AdmissionsView | None = None,
        access: AccessView | None = None,
        trials: TryTool | None = None,
        policies: PoliciesView | None = None,
        contracts: ContractsView | None = None,
        servers: ServersView | None = None,
        figures: CallFigures | None = None,
    ) -> None:
        self.catalog = catalog
        self.router = router
        self.metrics = metrics
        self.manifests = manifests if manifests is not None else Manifests()
        self.authorizer: Authorizer = authorizer if authorizer is not None else AllowAll()
        self.login = login
        self.audit = audit
        self.approvals = approvals
        self.events = events
        self.admissions = admissions
        self.access = access
        self.trials = trials
        self.policies = policies
        self.contracts = contracts
        self.servers = servers
        self.figures = figures

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/ui", self.home, methods=["GET"]),  # and `/ui/`, redirected here: the pages' root
            Route(CATALOG_PATH, self.catalog_view, methods=["GET"]),
            # `path`: a name with `/` (other sources allow one) reaches its tool or the 404 page
            Route(TOOLS_PATH + "/{name:path}", self.tool_view, methods=["GET"]),
            Route(METRICS_PATH, self.metrics_view, methods=["GET"]),
            Route(EVENTS_PATH, self.events_view, methods=["GET"]),
            Route(USAGE_PATH, self.usage_view, methods=["GET"]),
            Route(ROUTING_PATH, self.routing_view, methods=["GET"]),
            # Without authentication nobody logs in: the login page leads to the catalog.
            *(self.login.routes() if self.login is not None else [Route(LOGIN_PATH, self.home)]),
            *([Route(AUDIT_PATH, self.audit.page, methods=["GET"])] if self.audit is not None else []),
            *(self.approvals.routes() if self.approvals is not None else []),
            *(self.admissions.routes() if self.admissions is not None else []),
            *(self.access.routes() if self.access is not None else []),
            *([Route(self.trials.route_path(), self.trials.run, methods=["POST"])] if self.trials else []),
            *(self.policies.routes() if self.policies is not None else []),
            *(self.contracts.routes() if self.contracts is not None else []),
            *(self.servers.routes() if self.servers is not None else []),
        ]

    async def home(self, _: Request) -> Response:
        return RedirectResponse(CATALOG_PATH)

    async def catalog_view(self, request: Request) -> Response:
        params = request.query_params
        page, status = await run_in_threadpool(
            lambda: catalog_page(
                self.catalog,
                self.router,
                query=params.get("q", ""),
                api=params.get("api", ""),
                visible=self._visible(request),
                visitor=visitor_of(request),
            )
        )
        return page_response(page, status)

    async def tool_view(self, request: Request) -> Response:
        name = request.path_params["name"]
        visible = self._visible(request)
        found = find_tool(self.catalog, name, self.authorizer, principal_of_scope(request.scope))
        tool = found if isinstance(found, Tool) and visible(found) else None
        if tool is None:
            visitor = visitor_of(request)
            page = await run_in_threadpool(unknown_tool_page, self.catalog, name, visible, visitor)
            return page_response(page, 404)
        manifest = self.manifests.for_tool(tool)
        visitor = visitor_of(request)
        trial = try_part(tool, visitor) if self.trials is not None else None
        page = await run_in_threadpool(tool_page, self.catalog, tool, manifest, visitor, trial)
        return page_response(page)

    def _visible(self, request: Request) -> Visible:
        return tool_filter(self.authorizer.visible(principal_of_scope(request.scope))) or _everything

    async def metrics_view(self, request: Request) -> Response:
        visitor = visitor_of(request)
        window = request.query_params.get("window", "hour")
        if window not in WINDOWS:
            message = f"Unknown window {window!r}: one of {', '.join(WINDOWS)} (for example ?window=day)."
            return page_response(metrics_problem_page(message, visitor), 400)
        subject = request.query_params.get("subject", "").strip() or None
        query = request.query_params.get("q", "").strip() or None
        number = parse_page(request.query_params.get("page"))
        if number is None:
            message = "The page number must be a whole number from 1 (for example ?page=2)."
            return page_response(metrics_problem_page(message, visitor), 400)
        history: Html | None = None
        if self.figures is not None:
            principal = principal_of_scope(request.scope)
            figures = await self.figures.history_figures(principal, window, subject)
            history = await run_in_threadpool(history_charts, figures, query, number)
        keep = {"window": window, **({"subject": subject} if subject else {})}
        page: Html = await run_in_threadpool(
            lambda: metrics_page(
                read_stats(self.metrics), visitor, history, query=query, page=number, keep=keep
            )
        )
        return page_response(page)

    async def usage_view(self, request: Request) -> Response:
        visitor = visitor_of(request)
        window = request.query_params.get("window", "hour")
        if window not in WINDOWS:
            message = f"Unknown window {window!r}: one of {', '.join(WINDOWS)} (for example ?window=day)."
            return page_response(usage_problem_page(message, visitor), 400)
        usage = None
        if self.figures is not None:
            consumer = request.query_params.get("consumer", "").strip() or None
            usage = await self.figures.consumer(principal_of_scope(request.scope), window, consumer)
        if usage is None:
            message = (
                "This gateway keeps no audit log (it runs without a database), so it has no usage to show."
            )
            return page_response(usage_problem_page(message, visitor), 404)
        page: Html = await run_in_threadpool(usage_page, usage, visitor)
        return page_response(page)

    async def routing_view(self, request: Request) -> Response:
        visitor = visitor_of(request)
        view = None
        if self.figures is not None:
            view = await self.figures.routing_turns(principal_of_scope(request.scope), _TURNS_SHOWN)
        if view is None:
            message = "This gateway keeps no routing turns (it runs without a database)."
            return page_response(routing_problem_page(message, visitor), 404)
        page: Html = await run_in_threadpool(routing_page, view, visitor)
        return page_response(page)

    async def events_view(self, request: Request) -> Response:
        visitor = visitor_of(request)
        if not may_read_trace_events(principal_of_scope(request.scope)):
            message = (
                f"Reading trace events needs the scope {OPERATOR_SCOPE} and no tenant binding (A-AUTH-SCOPE)."
            )
            return page_response(events_problem_page(message, visitor), 403)
        if self.events is None:
            message = "This gateway keeps no trace events: set telemetry.events_keep above 0."
            return page_response(events_problem_page(message, visitor), 404)
        params = request.query_params
        kind = params.get("kind") or None
        if kind is not None and kind not in EVENT_KINDS:
            message = f"Unknown event kind {kind!r}; one of: {', '.join(EVENT_KINDS)}."
            return page_response(events_problem_page(message, visitor), 400)
        trace_id = params.get("trace_id") or None
        found = self.events.recent(kind=kind, trace_id=trace_id, limit=_EVENTS_SHOWN)
        kept = self.events.status()["kept"]
        page = events_page(found, kind=kind, trace_id=trace_id, kept=kept, visitor=visitor)
        return page_response(page)


_EVENTS_SHOWN = 200
_TURNS_SHOWN = 100


def _everything(tool: Tool) -> bool:
    return True


def routes(
    catalog: Catalog,
    router: Router,
    metrics: GatewayMetrics,
    *,
    manifests: Manifests | None = None,
    authorizer: Authorizer | None = None,
    login: Login | None = None,
    audit: AuditView | None = None,
    approvals: ApprovalsView | None = None,
    events: TraceEventLog | None = None,
    admissions: AdmissionsView | None = None,
    access: AccessView | None = None,
    trials: TryTool | None = None,
    policies: PoliciesView | None = None,
    contracts: ContractsView | None = None,
    servers: ServersView | None = None,
    figures: CallFigures | None = None,
) -> list[BaseRoute]:
    """`/`, `/ui/catalog`, `/ui/tools/{name}`, `/ui/metrics`, `/ui/events`, `/ui/audit`, `/ui/login`,
    `/ui/approvals`, `/ui/admissions`, `/ui/access`, `/ui/policies`, `/ui/contracts`, `/ui/servers` and
    `POST /ui/try/{name}`."""
    pages = Pages(
        catalog,
        router,
        metrics,
        manifests=manifests,
        authorizer=authorizer,
        login=login,
        audit=audit,
        approvals=approvals,
        events=events,
        admissions=admissions,
        access=access,
        trials=trials,
        policies=policies,
        contracts=contracts,
        servers=servers,
        figures=figures,
    )
    return pages.routes()
