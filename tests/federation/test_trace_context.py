"""A proxied call carries the caller's trace to the downstream server, on every path to it.

The fault server's `meta` tool answers the `_meta` its request arrived with. With a span current,
the request carries W3C `traceparent` (the adapter's span for the call, in the caller's trace) on
the direct path (an HTTP server at 2026-07-28) and on the SDK's path (its handshake-era twin,
a caller that listens for progress, a stdio server). A gateway that records no spans creates none
and sends none, and a caller's own `traceparent` then reaches the server as it was sent.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from colonnade.adapters.mcp.pool import McpPool
from colonnade.adapters.mcp.tools import McpTools
from colonnade.adapters.mcp.upstream import UpstreamState
from colonnade.adapters.registry import Invocation
from colonnade.catalog.mcp_projection import project_tool
from colonnade.config import McpServerSettings
from colonnade.governance.principal import ANONYMOUS_LOOPBACK
from colonnade.mcp_relay.relay import Relay
from colonnade.observability.tracing import build_tracer_provider
from tests.support.loopback import stop_process
from tests.support.mcp_servers import fault_http, fault_stdio

pytestmark = pytest.mark.e2e

TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$")
CALLERS_OWN = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class HandshakeCaller(Relay):
    """A handshake-era caller (its calls go to an HTTP server's handshake-era twin unless quiet)."""

    @property
    def handshake_era(self) -> bool:
        return True


@dataclass
class Servers:
    http: McpServerSettings
    stdio: McpServerSettings


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    process: subprocess.Popen[bytes]
    process, url = fault_http(tmp_path_factory.mktemp("trace") / "fault-http.log")
    try:
        yield Servers(
            McpServerSettings(name="web", transport="http", url=url),
            McpServerSettings.model_validate(fault_stdio("local")),
        )
    finally:
        stop_process(process)


@dataclass
class Proxy:
    pool: McpPool
    tools: McpTools
    tracer: Tracer
    exporter: InMemorySpanExporter

    async def meta(self, settings: McpServerSettings, relay: Relay) -> dict[str, Any]:
        """The `_meta` the server saw for one call of its `meta` tool."""
        tool = project_tool(
            settings,
            types.Tool(name="meta", input_schema={"type": "object"}),
            profile="strict",
            version="1.0.0",
        )
        invocation = Invocation(tool, {}, 10.0, ANONYMOUS_LOOPBACK, "call-1", "0" * 32, channel=relay)
        outcome = await self.tools.execute(invocation)
        assert outcome.ok, outcome
        return dict(outcome.body["meta"])


async def proxy_of(servers: Servers, provider: TracerProvider, exporter: InMemorySpanExporter) -> Proxy:
    tracer = provider.get_tracer("colonnade.servers")
    pool = McpPool(tracer=tracer)
    for settings in (servers.http, servers.stdio):
        pool.add(settings)
    pool.start()
    for _ in range(300):
        if all(pool[name].state is UpstreamState.READY for name in pool.names()):
            break
        await asyncio.sleep(0.05)
    return Proxy(pool, McpTools(pool, tracer=tracer), tracer, exporter)


@pytest.fixture
async def recording(servers: Servers) -> AsyncIterator[Proxy]:
    exporter = InMemorySpanExporter()
    provider = build_tracer_provider(exporter)
    proxy = await proxy_of(servers, provider, exporter)
    yield proxy
    await proxy.pool.aclose()
    provider.shutdown()


@pytest.fixture
async def quiet(servers: Servers) -> AsyncIterator[Proxy]:
    exporter = InMemorySpanExporter()
    provider = build_tracer_provider()  # no exporter: nothing recorded
    proxy = await proxy_of(servers, provider, exporter)
    yield proxy
    await proxy.pool.aclose()


def paths(servers: Servers) -> list[tuple[str, McpServerSettings, Relay]]:
    return [
        ("direct, 2026-07-28", servers.http, Relay()),
        ("direct, a quiet handshake-era caller on the server's own session", servers.http, HandshakeCaller()),
        ("SDK, handshake-era twin, log messages", servers.http, HandshakeCaller(log_level="debug")),
        ("SDK, a caller that hears progress", servers.http, Relay(wants_progress=True)),
        ("SDK, handshake-era twin with progress", servers.http, HandshakeCaller(wants_progress=True)),
        ("SDK, stdio", servers.stdio, Relay()),
    ]


async def test_every_hop_carries_the_current_trace(recording: Proxy, servers: Servers) -> None:
    for path, settings, relay in paths(servers):
        recording.exporter.clear()
        with recording.tracer.start_as_current_span("the caller's call") as caller:
            relay.meta = {"tracestate": "stale=1", "mine": "kept"}  # the gateway's context wins
            seen = await recording.meta(settings, relay)
        match = TRACEPARENT.match(str(seen.get("traceparent")))
        assert match is not None, (path, seen)
        (hop,) = [s for s in recording.exporter.get_finished_spans() if s.name == "mcp.tools/call"]
        assert hop.parent is not None and hop.parent.span_id == caller.get_span_context().span_id
        assert int(match[1], 16) == caller.get_span_context().trace_id, path  # the caller's trace
        assert int(match[2], 16) == hop.context.span_id, path  # its parent there: the gateway's hop
        assert seen["mine"] == "kept", path
        assert "tracestate" not in seen, path  # none is current: the caller's stale one is not sent on


async def test_without_recorded_spans_nothing_is_made_and_the_callers_own_passes(
    quiet: Proxy, servers: Servers
) -> None:
    assert quiet.tools.tracer is None  # no span is created per call
    for path, settings, relay in paths(servers):
        seen = await quiet.meta(settings, relay)
        assert "traceparent" not in seen, path
        relay.meta = {"traceparent": CALLERS_OWN}
        assert (await quiet.meta(settings, relay))["traceparent"] == CALLERS_OWN, path


async def test_a_quiet_handshake_era_call_takes_the_servers_own_session(
    quiet: Proxy, servers: Servers
) -> None:
    """Only the answer can pass on a quiet call: it goes on the server's 2026-07-28 session (sent
    directly), not on the handshake-era twin that a call with progress or log messages needs."""
    own = quiet.pool[servers.http.name]
    seen = await quiet.meta(servers.http, HandshakeCaller())
    assert seen[types.PROTOCOL_VERSION_META_KEY] == own.protocol_version  # a 2026-07-28 request
    for relay in (HandshakeCaller(wants_progress=True), HandshakeCaller(log_level="debug")):
        before = own.calls
        seen = await quiet.meta(servers.http, relay)
        assert types.PROTOCOL_VERSION_META_KEY not in seen, relay  # a handshake-era request
        assert own.calls == before, relay  # counted on the twin, not on the server's own session
