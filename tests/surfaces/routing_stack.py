"""An MCP surface with routing wired in as the gateway wires it, over the demo contracts."""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.adapters.http import HttpAdapter
from colonnade.calls.default_pipeline import build_pipeline
from colonnade.calls.service import CallService
from colonnade.catalog.catalog import Catalog
from colonnade.config import RoutingSettings
from colonnade.routing.catalog_index import CatalogIndex
from colonnade.routing.learning import CallFeedback, CoOccurrence
from colonnade.routing.router import Router
from colonnade.surfaces.mcp_discovery import CallerScope, Discovery, everything
from colonnade.surfaces.mcp_routing import DynamicToolList
from colonnade.surfaces.mcp_server import McpSurface
from tests.surfaces.conftest import demo_contract

__all__ = ["RoutedGateway", "routed_gateway"]


@dataclass
class RoutedGateway:
    catalog: Catalog
    surface: McpSurface
    router: Router
    feedback: CallFeedback
    http: HttpAdapter


def routed_gateway(
    backend_url: str, settings: RoutingSettings | None = None, *, scope: CallerScope = everything
) -> RoutedGateway:
    settings = settings or RoutingSettings(top_k=3)
    catalog = Catalog()
    for name in ("crm", "billing"):
        catalog.publish(demo_contract(name, backend_url))
    index = CatalogIndex(catalog)
    feedback = CallFeedback(CoOccurrence())
    router = Router.from_settings(settings, index.corpus, learning=feedback.learned)
    http = HttpAdapter()
    surface = McpSurface(
        catalog,
        CallService(catalog, build_pipeline(http)),
        page_size=4,
        discovery=Discovery(catalog, router, scope=scope),
        routing=DynamicToolList(catalog, router, settings, feedback=feedback, scope=scope),
    )
    return RoutedGateway(catalog, surface, router, feedback, http)
