"""Downstream MCP servers of one gateway: the pool, their tools in the catalog, their change events.

Each server's tool list, whenever it is (re)discovered, passes the admission pins
(`tool_admission.py`: a changed or new tool waits for a two-person approval), is projected into
`Tool` records and served as the catalog source `mcp:<name>`; the catalog's change events then
reach every MCP client. Other events of a server (prompt or resource lists changed, a resource
updated) go to the listeners the gateway registers, such as the per-server MCP endpoints. Servers
can be added, removed and restarted while the gateway runs (CLI and REST); what is added this way
lasts until the gateway stops: `servers:` in colonnade.yaml is the lasting list. Such a change made
on one replica is published on the change fan-out (`server.changed`: the name, the action and, for
an addition, the definition, which names secrets but never holds one) and applied by every other
replica. A replica that missed it (Redis away) keeps the servers it had: these changes are not
stored anywhere to re-read, which is why lasting servers belong in colonnade.yaml.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.shared.subscriptions import ServerEvent
from opentelemetry.trace import Tracer
from pydantic import ValidationError

from colonnade.adapters.command_digest import CommandFilesMissing, command_digests
from colonnade.adapters.mcp.pool import McpPool
from colonnade.adapters.mcp.upstream import Upstream
from colonnade.adapters.mcp.wire import UpstreamMisconfigured
from colonnade.adapters.secrets import SecretResolver
from colonnade.adapters.stdio_command import missing_command
from colonnade.catalog.catalog import Catalog
from colonnade.catalog.catalog_errors import NotInCatalog
from colonnade.catalog.mcp_projection import project_server_tools, source_id
from colonnade.catalog.naming import WireProfile
from colonnade.config import McpServerSettings
from colonnade.governance.principal import Principal
from colonnade.runtime.tool_admission import COMMAND_KEY, Admitted, ToolAdmission
from colonnade.shared_state import Change, Fanout
from colonnade.shared_state.topics import SERVER_CHANGED

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
        changes: Fanout | None = None,
        admission: ToolAdmission | None = None,
    ) -> None:
        self.catalog = catalog
        self.changes = changes
        self.profile: WireProfile = profile
        self.admission = admission if admission is not None else ToolAdmission()
        self._listed: dict[str, tuple[types.Tool, ...]] = {}
        self.pool = McpPool(secrets=secrets, tracer=tracer, on_tools=self._on_tools, on_event=self._on_event)
        self.pool.command_gate = self._command_gate
        self.listeners: list[ServerEventListener] = []

    def configure(self, settings: McpServerSettings) -> Upstream:
        """Add a server to the pool; it starts with the pool (or at once when the pool runs)."""
        return self.pool.add(settings)

    async def add(self, settings: McpServerSettings) -> None:
        """Add a server while the gateway runs (REST, CLI); it lasts until the gateway stops."""
        self.configure(settings)
        definition = settings.model_dump(mode="json", exclude_none=True)
        await self._tell({"name": settings.name, "action": "add", "definition": definition})

    def unstartable(self, settings: McpServerSettings) -> str | None:
        """Why the server could not start on this host (a stdio command missing), or None."""
        return missing_command(settings)

    def get(self, name: str) -> Upstream | None:
        return self.pool.get(name)

    def settings(self) -> list[McpServerSettings]:
        return [self.pool[name].settings for name in self.pool.names()]

    async def replace(self, settings: McpServerSettings) -> None:
        """A new definition for a configured server (a fixed command, say): stopped, then started anew.
        Its tools are listed again by the new process; their admission pins stay."""
        await self._replace(settings)
        definition = settings.model_dump(mode="json", exclude_none=True)
        await self._tell({"name": settings.name, "action": "replace", "definition": definition})

    async def _replace(self, settings: McpServerSettings) -> None:
        if self.pool.get(settings.name) is not None:
            await self.pool.remove(settings.name)
        self.configure(settings)

    async def remove(self, name: str) -> None:
        """Stop the server and stop serving its tools (its endpoint answers 404 from now on)."""
        await self._remove(name)
        await self._tell({"name": name, "action": "remove"})

    async def restart(self, name: str) -> None:
        upstream = self.pool.get(name)
        if upstream is None:
            raise KeyError(name)
        upstream.restart()
        await self._tell({"name": name, "action": "restart"})

    def follow(self, changes: Fanout) -> None:
        """Apply the server changes other replicas publish."""
        changes.subscribe(SERVER_CHANGED, self._on_change)

    async def _on_change(self, change: Change) -> None:
        if change.resync:
            return  # nothing stored to re-read: see the module's docstring
        name, action = change.payload.get("name"), change.payload.get("action")
        if not isinstance(name, str):
            return
        upstream = self.pool.get(name)
        if action == "replace" and upstream is not None:
            try:
                replacement = McpServerSettings.model_validate(change.payload.get("definition"))
            except ValidationError as exc:
                logger.warning(
                    "server %s replaced on another replica: its definition is refused here: %s", name, exc
                )
                return
            await self._replace(replacement)
        elif action == "add" and upstream is None:
            try:
                settings = McpServerSettings.model_validate(change.payload.get("definition"))
            except ValidationError as exc:
                logger.warning(
                    "server %s added on another replica has a definition this one refuses: %s", name, exc
                )
                return
            missing = self.unstartable(settings)
            if missing is not None:
                logger.warning("server %s added on another replica cannot start here: %s", name, missing)
                return
            self.configure(settings)
        elif action == "remove" and upstream is not None:
            await self._remove(name)
        elif action == "restart" and upstream is not None:
            upstream.restart()

    async def _remove(self, name: str) -> None:
        await self.pool.remove(name)
        with contextlib.suppress(NotInCatalog):
            self.catalog.remove_source(source_id(name))

    async def _tell(self, payload: dict[str, object]) -> None:
        if self.changes is not None:
            await self.changes.publish(SERVER_CHANGED, payload)

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
        if outcome.admitted and tool == COMMAND_KEY:
            upstream.restart()  # held down until now: it starts with the admitted command
            return outcome
        listed = self._listed.get(name)
        if outcome.admitted and listed is not None:
            self._on_tools(upstream, listed)
        return outcome

    async def _command_gate(self, settings: McpServerSettings) -> str | None:
        """Before each start of a stdio server with `pin_command`: its files against the admitted ones."""
        if settings.pin_command is None:
            return None
        try:
            digests = await asyncio.to_thread(command_digests, settings)
        except CommandFilesMissing as exc:
            raise UpstreamMisconfigured(str(exc)) from None
        return self.admission.check_command(settings, digests)

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
