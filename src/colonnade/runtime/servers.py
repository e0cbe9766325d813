"""Downstream MCP servers of one gateway: the pool, their tools in the catalog, their change events.

Each server's tool list, whenever it is (re)discovered, passes the admission pins
(`tool_admission.py`: a changed or new tool waits for a two-person approval), is projected into
`Tool` records and served as the catalog source `mcp:<name>`; the catalog's change events then
reach every MCP client. Other events of a server (prompt or resource lists changed, a resource
updated) go to the listeners the gateway registers, such as the per-server MCP endpoints. Servers
can be added, removed and restarted while the gateway runs (CLI and REST); what is added this way
lasts until the gateway stops: `servers:` in colonnade.yaml is the lasting list.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.shared.subscriptions import ServerEvent
from opentelemetry.trace import Tracer

from colonnade.adapters.mcp.pool import McpPool
from colonnade.adapters.mcp.upstream import Upstream
from colonnade.adapters.secrets import SecretResolver
from colonnade.adapters.stdio_command import missing_command
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.catalog_errors import NotInCatalog
from colonnade.catalog.mcp_projection import project_server_tools, source_id
from colonnade.catalog.naming import WireProfile
from colonnade.config import McpServerSettings
from colonnade.governance.principal import Principal
from colonnade.runtime.tool_admission import Admitted, ToolAdmission

__all__ = ["ServerEventListener", "Servers"]

logger = logging.getLogger("colonnade.servers")

ServerEventListener = Callable[[str, ServerEvent], Awaitable[None]]


class Servers:
    def __init__(
        self,
        catalog: Catalog,
        *,
        profile: WireProfile = "strict",
        tracer: Tracer | None = None,
        secrets: SecretResolver | None = None,
        admission: ToolAdmission | None = None,
    ) -> None:
        self.catalog = catalog
        self.profile: WireProfile = profile
        self.admission = admission if admission is not None else ToolAdmission()
        self._listed: dict[str, tuple[types.Tool, ...]] = {}
        self.pool = McpPool(secrets=secrets, tracer=tracer, on_tools=self._on_tools, on_event=self._on_event)
        self.listeners: list[ServerEventListener] = []

    def configure(self, settings: McpServerSettings) -> Upstream:
        """Add a server to the pool; it starts with the pool (or at once when the pool runs)."""
        return self.pool.add(settings)

    async def add(self, settings: McpServerSettings) -> None:
        """Add a server while the gateway runs (REST, CLI); it lasts until the gateway stops."""
        self.configure(settings)

    def unstartable(self, settings: McpServerSettings) -> str | None:
        """Why the server could not start on this host (a stdio command missing), or None."""
        return missing_command(settings)

    def get(self, name: str) -> Upstream | None:
        return self.pool.get(name)

    def settings(self) -> list[McpServerSettings]:
        return [self.pool[name].settings for name in self.pool.names()]

    async def remove(self, name: str) -> None:
        """Stop the server and stop serving its tools (its endpoint answers 404 from now on)."""
        await self.pool.remove(name)
        with contextlib.suppress(NotInCatalog):
            self.catalog.remove_source(source_id(name))

    def restart(self, name: str) -> None:
        upstream = self.pool.get(name)
        if upstream is None:
            raise KeyError(name)
        upstream.restart()

    def start(self) -> None:
        self.pool.start()

    def status(self) -> list[dict[str, Any]]:
        return [status.to_json() for status in self.pool.statuses()]

    async def aclose(self) -> None:
        await self.pool.aclose()

    def _on_tools(self, upstream: Upstream, tools: tuple[types.Tool, ...]) -> None:
        settings = upstream.settings
        contract = self.catalog.active_version(settings.tenant, settings.name)
        if contract is not None:  # allowed, but rarely meant: the API's governance covers these tools
            warning = (
                f"{settings.tenant}:{settings.name} is also the API of a contract ({settings.tenant}/"
                f"{settings.name} {contract}): this server's tools are served in its namespace (its"
                " policies, subscriptions and pages); give the server another name or tenant"
            )
            if warning not in upstream.warnings:
                logger.warning("server %s: %s", upstream.name, warning)
                upstream.warnings = (*upstream.warnings, warning)
        self._listed[upstream.name] = tools
        admitted = self.admission.review(settings, tools)
        status = upstream.status()
        projected = project_server_tools(
            upstream.settings, admitted, profile=self.profile, version=status.server_version
        )
        self.catalog.add_tools(source_id(upstream.name), projected)

    async def admit(
        self, name: str, tool: str, approver: str, principal: Principal | None = None
    ) -> Admitted:
        """One approval of a parked tool of server `name`; the second person's serves it at once."""
        upstream = self.pool.get(name)
        if upstream is None:
            raise KeyError(name)
        outcome = await self.admission.approve(upstream.settings, tool, approver, principal)
        listed = self._listed.get(name)
        if outcome.admitted and listed is not None:
            self._on_tools(upstream, listed)
        return outcome

    def admitted(self, name: str, tool: str) -> dict[str, Any] | None:
        """The admitted definition of a tool of server `name` (None while it waits, or no server)."""
        upstream = self.pool.get(name)
        return self.admission.admitted(upstream.settings, tool) if upstream is not None else None

    def admission_of(self, name: str) -> dict[str, Any]:
        """The pins and parked tools of server `name` (KeyError when there is no such server)."""
        upstream = self.pool.get(name)
        if upstream is None:
            raise KeyError(name)
        return self.admission.pins(upstream.settings)

    async def _on_event(self, upstream: Upstream, event: ServerEvent) -> None:
        for listener in list(self.listeners):
            await listener(upstream.name, event)
