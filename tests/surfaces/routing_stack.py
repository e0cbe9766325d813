"""A gateway with routing on, built from parts over the demo contracts (no database)."""

from __future__ import annotations

from dataclasses import dataclass

from colonnade.adapters.http import HttpAdapter
from colonnade.catalog.catalog import Catalog
from colonnade.config import RoutingSettings, Settings
from colonnade.governance.authorization import Authorizer
from colonnade.routing.learning import CallFeedback
from colonnade.routing.router import Router
from colonnade.runtime.gateway import Gateway
from colonnade.surfaces.mcp.server import McpSurface
from tests.surfaces.conftest import demo_contract

__all__ = ["RoutedGateway", "routed_gateway"]


@dataclass
class RoutedGateway:
    catalog: Catalog
    surface: McpSurface
    router: Router
    feedback: CallFeedback
    http: HttpAdapter
    gateway: Gateway


def routed_gateway(
    backend_url: str, settings: RoutingSettings | None = None, *, authorizer: Authorizer | None = None
) -> RoutedGateway:
    routing = (settings or RoutingSettings(top_k=3)).model_copy(update={"enabled": True})
    catalog = Catalog()
    for name in ("crm", "billing"):
        catalog.publish(demo_contract(name, backend_url))
    config = Settings(routing=routing).model_copy(
        update={"server": Settings().server.model_copy(update={"page_size": 4})}
    )
    gateway = Gateway(config, catalog=catalog, authorizer=authorizer)
    return RoutedGateway(catalog, gateway.mcp, gateway.router, gateway.feedback, gateway.http, gateway)
