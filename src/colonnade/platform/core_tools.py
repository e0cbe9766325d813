"""Every core tool of this gateway, in ADR-012's order, and their handlers for the builtin adapter."""

from __future__ import annotations

from collections.abc import Iterator

from colonnade.platform.alert_tools import ALERT_TOOLS
from colonnade.platform.catalog_tools import CATALOG_TOOLS
from colonnade.platform.contract_tools import CONTRACT_TOOLS
from colonnade.platform.core_tool import CoreTool
from colonnade.platform.discovery import DISCOVERY_TOOLS
from colonnade.platform.observability_tools import OBSERVABILITY_TOOLS
from colonnade.platform.runner import CoreToolHandler
from colonnade.platform.security_tools import SECURITY_TOOLS
from colonnade.platform.series_tools import SERIES_TOOLS
from colonnade.platform.services import PlatformServices
from colonnade.platform.subscription_tools import SUBSCRIPTION_TOOLS

__all__ = ["ADR_SERVED_ELSEWHERE", "CORE_TOOLS", "core_handlers"]

CORE_TOOLS: tuple[CoreTool, ...] = (
    *DISCOVERY_TOOLS,
    *CATALOG_TOOLS,
    *SUBSCRIPTION_TOOLS,
    *OBSERVABILITY_TOOLS,
    *SERIES_TOOLS,
    *ALERT_TOOLS,
    *CONTRACT_TOOLS,
    *SECURITY_TOOLS,
)

ADR_SERVED_ELSEWHERE = {"search tools": "search_tools"}
"""ADR-012 functions served by a gateway tool defined elsewhere: the discovery tool `search_tools`
(open to every caller, listed while routing is enabled; it shows only tools the caller may see)."""


def core_handlers(services: PlatformServices) -> Iterator[tuple[CoreTool, CoreToolHandler]]:
    """Each core tool with its handler, to register with the builtin adapter by `tool.operation`."""
    for core in CORE_TOOLS:
        yield core, CoreToolHandler(core, services)
