"""The connection pool of downstream MCP servers: one long-lived `Upstream` per configured server.

Built once by the composition root. Servers are added, removed and restarted while the gateway
runs; each keeps one session that every call to it shares (no session, HTTP client or TLS context
per call). `start()` brings up the servers added so far; servers added later start at once.

A Streamable HTTP server that speaks 2026-07-28 gets a second, handshake-era session when a
handshake-era client calls it through its own endpoint (`for_caller`), opened on demand and closed
when idle: that client then sees the server's own handshake-era behaviour (its requests to the
client, its stream closes), not a translation. A quiet tool call of such a client (only its answer
can pass: `Relay.needs_handshake_session`) takes the server's own session instead, as on `/mcp`,
where it is POSTed directly. A stdio server keeps one session: one process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry.trace import Tracer

from colonnade.adapters.mcp.upstream import (
    CommandGate,
    ConnectionListener,
    EventListener,
    ToolsListener,
    Upstream,
    UpstreamStatus,
)
from colonnade.adapters.secrets import EnvSecretResolver, SecretResolver
from colonnade.config import McpServerSettings

__all__ = ["McpPool"]


class McpPool:
    def __init__(
        self,
        *,
        secrets: SecretResolver | None = None,
        tracer: Tracer | None = None,
        on_tools: ToolsListener | None = None,
        on_event: EventListener | None = None,
    ) -> None:
        self.secrets: SecretResolver = secrets if secrets is not None else EnvSecretResolver()
        self.tracer = tracer
        self.on_tools = on_tools
        self.on_event = on_event
        self.on_connection: ConnectionListener | None = None
        """Given to every server's supervisor: told when its session comes up or goes away."""
        self.hidden: tuple[Path, ...] = ()
        """The gateway's own paths (its data directory) no stdio server's sandbox shows."""
        self.command_gate: CommandGate | None = None
        """Asked before each start of a stdio server whether its command is the admitted one."""
        self._upstreams: dict[str, Upstream] = {}
        self._twins: dict[str, Upstream] = {}
        self._running = False

    def __contains__(self, name: object) -> bool:
        return name in self._upstreams

    def __len__(self) -> int:
        return len(self._upstreams)

    def __getitem__(self, name: str) -> Upstream:
        return self._upstreams[name]

    def get(self, name: str) -> Upstream | None:
        return self._upstreams.get(name)

    def for_caller(self, name: str, *, handshake_era: bool) -> Upstream | None:
        """The session a caller of that era talks to: the server's own, or its handshake-era twin."""
        upstream = self._upstreams.get(name)
        if upstream is None or not handshake_era or upstream.settings.transport != "http":
            return upstream
        if upstream.negotiated not in MODERN_PROTOCOL_VERSIONS:
            return upstream
        twin = self._twins.get(name)
        if twin is None:
            settings = upstream.settings.model_copy(update={"protocol": "legacy"})
            twin = Upstream(
                settings,
                secrets=self.secrets,
                tracer=self.tracer,
                on_event=self.on_event,
                on_demand=True,
                on_connection=self.on_connection,
                hidden=self.hidden,
            )
            self._twins[name] = twin
            twin.start()
        return twin

    def names(self) -> list[str]:
        return sorted(self._upstreams)

    def add(self, settings: McpServerSettings) -> Upstream:
        """Add a server (started at once when the pool runs); its name must be new."""
        if settings.name in self._upstreams:
            raise ValueError(f"a server named {settings.name!r} is configured already")
        upstream = Upstream(
            settings,
            secrets=self.secrets,
            tracer=self.tracer,
            on_tools=self.on_tools,
            on_event=self.on_event,
            on_connection=self.on_connection,
            hidden=self.hidden,
            command_gate=self.command_gate,
        )
        self._upstreams[settings.name] = upstream
        if self._running:
            upstream.start()
        return upstream

    async def remove(self, name: str) -> Upstream:
        upstream = self._upstreams.pop(name)
        twin = self._twins.pop(name, None)
        await asyncio.gather(upstream.stop(), *([twin.stop()] if twin is not None else []))
        return upstream

    def start(self) -> None:
        self._running = True
        for upstream in self._upstreams.values():
            upstream.start()

    def violations(self) -> dict[tuple[str, str], int]:
        """(server, kind) -> times its sandbox ended its process (the metrics' view)."""
        return {
            (name, kind): times
            for name, upstream in self._upstreams.items()
            for kind, times in upstream.violations.items()
        }

    def statuses(self) -> list[UpstreamStatus]:
        return [self._upstreams[name].status() for name in self.names()]

    async def aclose(self) -> None:
        self._running = False
        everything = [*self._upstreams.values(), *self._twins.values()]
        await asyncio.gather(*(upstream.stop() for upstream in everything))
