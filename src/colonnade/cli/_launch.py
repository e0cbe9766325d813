"""Running the gateway for the CLI: imported only by the commands that serve (it loads the world)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import math
import signal
import socket
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from types import FrameType
from typing import Any, TypeVar

import uvicorn
from mcp.server.stdio import stdio_server

from colonnade.calls.load import LoadMonitor
from colonnade.calls.pipeline import Pipeline
from colonnade.calls.stages.admission import Admission
from colonnade.calls.stages.circuit import CircuitBreaker
from colonnade.calls.stages.drain import Drain
from colonnade.cli._http_protocol import ConnectionLimits, guarded_protocol
from colonnade.cli._tls import uvicorn_tls_options
from colonnade.cli.common import err_console, fail
from colonnade.cli.database_problem import DATABASE_ERRORS, database_problem
from colonnade.config import ConfigError, McpServerSettings, ServerSettings, Settings
from colonnade.contracts.load import ContractLoadError
from colonnade.contracts.validate import ContractInvalid
from colonnade.errors import ColonnadeError
from colonnade.organs.organ_errors import OrganCardError, OrganCardsInvalid, OrganLoadError, PathwayError
from colonnade.runtime.gateway import Gateway
from colonnade.store.store_errors import StoreError
from colonnade.surfaces.admission import AdmissionControl
from colonnade.surfaces.mcp.stdio_framing import AnsweringMalformed

__all__ = ["open_gateway", "run", "run_http", "run_stdio"]

logger = logging.getLogger("colonnade.gateway")

ORGAN_ERRORS = (OrganCardError, OrganCardsInvalid, OrganLoadError, PathwayError)


def run(main: Coroutine[Any, Any, None]) -> None:
    """uvloop where available: a faster event loop is most of a gateway's per-call budget."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    uvloop.run(main)


@contextlib.asynccontextmanager
async def open_gateway(settings: Settings) -> AsyncIterator[Gateway]:
    try:
        gateway = await Gateway.open(settings)
    except ContractLoadError as exc:
        fail(f"cannot load contract: {exc}")
    except ContractInvalid as exc:
        lines = [f"  {f.code} {f.path}: {f.message} (fix: {f.fix})" for f in exc.findings if f.is_error]
        fail("a configured contract is invalid:\n" + "\n".join(lines))
    except StoreError as exc:
        fail(str(exc))
    except ORGAN_ERRORS as exc:
        fail(str(exc))
    except DATABASE_ERRORS as exc:
        fail(database_problem(settings, exc))
    except ColonnadeError as exc:  # e.g. unusable auth settings (A-AUTH-CONFIG)
        fail(f"{exc.code}: {exc}")
    # Start-up objects (modules, catalog, schemas) never die: keep them out of the collector's
    # full passes, which would otherwise stall the event loop mid-call as the heap grows.
    gc.collect()
    gc.freeze()
    try:
        yield gateway
    finally:
        await gateway.aclose()
        logger.info("gateway stopped: calls drained, state saved")


# After the drain limit, calls are cut and answered; this long again is left for the answers to
# be written before uvicorn cancels whatever still runs (e.g. an open event stream).
ANSWER_GRACE_S = 2.0

S = TypeVar("S")


async def run_http(
    settings: Settings, *, banner: bool, snippet: bool = False, token: str | None = None
) -> None:
    try:
        tls = uvicorn_tls_options(settings.server.tls)  # checked before anything opens
    except ConfigError as exc:
        fail("cannot serve TLS:\n  " + "\n  ".join(exc.problems))
    async with open_gateway(settings) as gateway:
        server_settings = settings.server
        host, port = server_settings.host, server_settings.port
        try:
            app = gateway.http_app()
        except ColonnadeError as exc:  # an unauthenticated gateway beyond loopback (A-AUTH-NOT-CONFIGURED)
            fail(f"{exc.code}: {exc}")
        load = _wire_load(gateway, server_settings)
        config = uvicorn.Config(
            AdmissionControl(app, load),
            host=host,
            port=port,
            log_level="warning",
            log_config=None,  # uvicorn's records go through the process's logging setup
            lifespan="on",
            http=guarded_protocol(_connection_limits(server_settings), load),
            timeout_keep_alive=server_settings.keep_alive_timeout_s,
            timeout_graceful_shutdown=math.ceil(server_settings.drain_timeout_s + ANSWER_GRACE_S),
            **tls,
        )
        drain = _stage(gateway.calls.pipeline, Drain)
        server = _GracefulServer(config, drain, server_settings.drain_timeout_s)
        follow_up: asyncio.Task[None] | None = None
        if banner:
            _print_banner(gateway, f"{server_settings.scheme}://{host}:{port}/mcp", snippet, token)
            if settings.servers:
                follow_up = asyncio.create_task(_report_servers_when_ready(gateway))
        async with load.sampling():
            try:
                with contextlib.suppress(SystemExit):  # uvicorn exits when it cannot bind; we say why below
                    await server.serve()
            finally:
                if follow_up is not None:
                    follow_up.cancel()
        if not server.started:
            fail(f"could not listen on {host}:{port}; is the port in use? Choose another with --port")


def _wire_load(gateway: Gateway, server: ServerSettings) -> LoadMonitor:
    """Admission control's settings and metrics, and the circuit breaker's metrics."""
    pipeline = gateway.calls.pipeline
    admission = _stage(pipeline, Admission)
    load = admission.load if admission is not None else LoadMonitor()
    load.configure(max_in_flight=server.max_calls_in_flight, shed_late=server.shed_late_calls)
    gateway.metrics.track_load(load)
    breaker = _stage(pipeline, CircuitBreaker)
    if breaker is not None:
        gateway.metrics.track_circuits(breaker)
    return load


def _connection_limits(server: ServerSettings) -> ConnectionLimits:
    return ConnectionLimits(
        header_timeout_s=server.header_timeout_s,
        body_timeout_s=server.body_timeout_s,
        max_connections=server.max_connections,
        max_header_bytes=server.max_header_bytes,
    )


def _stage(pipeline: Pipeline, kind: type[S]) -> S | None:
    """The pipeline's stage of this kind, which the server wires to its settings and signals."""
    return next((stage for stage in pipeline.stages if isinstance(stage, kind)), None)


class _GracefulServer(uvicorn.Server):
    """uvicorn's server with a bounded graceful stop, and without re-raising the stop signal.

    uvicorn stops serving on SIGINT/SIGTERM and then raises the signal again, which kills the
    process before `open_gateway` can close the gateway: in-flight calls would not be drained,
    the routing index and learned co-occurrence not saved, pools not closed. A graceful stop is
    what orchestrators ask for with SIGTERM, so the gateway finishes its shutdown and exits 0.
    Calls in flight get `drain_timeout_s` to finish; then the drain stage ends them with a
    retryable `R-CAP-SHUTTING-DOWN`. A second signal does that at once and stops waiting.
    """

    def __init__(self, config: uvicorn.Config, drain: Drain | None, drain_timeout_s: float) -> None:
        super().__init__(config)
        self.drain = drain
        self.drain_timeout_s = drain_timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signal handlers can only be installed from the main thread
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            self.should_exit = True
            return
        self.force_exit = True
        if self._loop is not None:  # a signal handler must not touch the loop's state directly
            self._loop.call_soon_threadsafe(self._cut, "a second stop signal")

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        deadline = asyncio.get_running_loop().call_later(
            self.drain_timeout_s, self._cut, f"the drain limit of {self.drain_timeout_s:g} s"
        )
        try:
            await super().shutdown(sockets)
        finally:
            deadline.cancel()
        if self.force_exit:  # uvicorn then skips the app's shutdown; background tasks still need stopping
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.lifespan.shutdown(), ANSWER_GRACE_S)

    def _cut(self, why: str) -> None:
        if self.drain is None or self.drain.is_cut:
            return
        cut = self.drain.cut()
        logger.warning("stopping: %s; %d call(s) still running end with R-CAP-SHUTTING-DOWN", why, cut)


async def run_stdio(settings: Settings) -> None:
    async with open_gateway(settings) as gateway, stdio_server() as (read, write):
        _warn_stdio_pitfalls(gateway, settings)
        sync = asyncio.create_task(gateway.sync.run()) if gateway.sync is not None else None
        gateway.servers.start()
        try:
            server = gateway.mcp.server  # calls run as the configured local principal
            answering = AnsweringMalformed(read, write)  # a line that is not JSON-RPC gets an error
            await server.run(answering, write, server.create_initialization_options())
        finally:
            if sync is not None:
                sync.cancel()


def _warn_stdio_pitfalls(gateway: Gateway, settings: Settings) -> None:
    """An MCP client starts a stdio server in a folder of its choosing: say what that led to.

    stderr only (stdout is the protocol), and only when something is off: no tools, or state kept
    under a relative data_dir, i.e. in whatever folder the client happened to start us in.
    """
    if not len(gateway.catalog) and not settings.servers:  # a server's tools come once it connects
        err_console.print(
            "[yellow]warning:[/yellow] serving 0 tools over stdio: no contract is configured and none is "
            "stored; pass -C /absolute/path/to/contracts (or --config /absolute/path/colonnade.yaml) in "
            "the client's server command",
            soft_wrap=True,
        )
    if not settings.data_dir.is_absolute():
        err_console.print(
            f"[yellow]note:[/yellow] state is kept in {settings.data_dir.resolve()} (data_dir is relative to "
            "the folder the client starts the server in); set COLONNADE_DATA_DIR to an absolute path",
            soft_wrap=True,
        )


async def _report_servers_when_ready(gateway: Gateway, timeout_s: float = 120.0) -> None:
    """The banner's last lines, once each downstream server is ready: its tools, and what its
    settings got wrong (a `tools:` override naming no tool of the server), where the user looks."""
    waiting = [server.name for server in gateway.settings.servers]
    deadline = asyncio.get_running_loop().time() + timeout_s
    while waiting and asyncio.get_running_loop().time() < deadline:
        for name in list(waiting):
            upstream = gateway.servers.get(name)
            status = upstream.status() if upstream is not None else None
            if status is not None and status.state in ("misconfigured", "unadmitted"):  # held: say why now
                waiting.remove(name)
                held = f"MCP server {status.state}, not started: {status.last_error}"
                err_console.print(f"  {status.tenant}/{name}: {held}", markup=False, soft_wrap=True)
                continue
            if status is None or status.state != "ready":
                continue
            waiting.remove(name)
            said = f"  {status.tenant}/{name}: MCP server ready, {status.tools} tools"
            err_console.print(said, markup=False, soft_wrap=True)
            for warning in status.warnings:
                err_console.print(f"    warning: {warning}", markup=False, soft_wrap=True)
        await asyncio.sleep(0.2)


def _print_confinement(gateway: Gateway, upstream: McpServerSettings) -> None:
    """The sandbox a stdio server gets here, and what of it this host cannot apply (issue 33 item 5)."""
    from colonnade.adapters.sandbox.confinement import plan, summary

    confinement = plan(upstream, hidden=(gateway.settings.data_dir.resolve(),))
    err_console.print(f"    {summary(confinement)}", markup=False, soft_wrap=True)
    for gap in confinement.missing if confinement.enabled else ():
        err_console.print(f"    warning: not applied: {gap}", markup=False, soft_wrap=True)


def _print_banner(gateway: Gateway, url: str, snippet: bool, token: str | None = None) -> None:
    err_console.print(
        f"[bold green]Colonnade[/bold green] serving {len(gateway.catalog)} tools at [bold]{url}[/bold]"
    )
    if gateway.governance.authenticator is None:
        err_console.print(
            "[yellow]No authentication configured: anyone who can reach this loopback port may call "
            "every tool (see docs/governance.md to turn it on).[/yellow]"
        )
    err_console.print(f"Catalog: {url.removesuffix('/mcp')}/ui/catalog")
    if gateway.governance.authenticator is not None:
        err_console.print(
            "  pages ask to log in once: paste an API key or access token"
            + (" (the demo's is in data_dir/demo-token)" if token is not None else "")
        )
    for entry in gateway.catalog.api_versions():
        if entry.active:
            err_console.print(f"  {entry.tenant}/{entry.api} {entry.version}: {entry.tools} tools")
    tenant = gateway.settings.organs.tenant
    for card in gateway.executive.host.cards:
        count = len(card.operations())
        err_console.print(f"  {tenant}/{card.name} {card.version}: {count} tools (organ, in-process)")
    if gateway.executive.pathways:
        err_console.print(f"  {tenant}/pathway: {len(gateway.executive.pathways)} tools (pathways of organs)")
    for upstream in gateway.settings.servers:  # they connect after this: their tools are not counted yet
        err_console.print(
            f"  {upstream.tenant}/{upstream.name}: MCP server ({upstream.transport}), connecting: its tools "
            "join when it is ready (colonnade servers list)",
            markup=False,
            soft_wrap=True,
        )
        if upstream.transport == "stdio":
            _print_confinement(gateway, upstream)
    if snippet:
        server: dict[str, object] = {"type": "http", "url": url}
        if token is not None:
            server["headers"] = {"Authorization": f"Bearer {token}"}
        config = {"mcpServers": {"colonnade": server}}
        err_console.print("MCP client config (paste into your client's settings):")
        err_console.print(json.dumps(config, indent=2), markup=False, highlight=False)
        if token is not None:
            err_console.print(
                "Destructive tools wait for a second person: approve with the token in "
                "demo-approver-token (docs/approvals.md)."
            )
            err_console.print(  # run here they find the demo's database (data_dir/demo.json)
                "Operator commands (approvals, keys, agents, audit) run in this folder use the demo's "
                f"database; from elsewhere: COLONNADE_DATA_DIR={gateway.settings.data_dir} "
                "colonnade approvals list",
                soft_wrap=True,
            )
        err_console.print(f"Health: {url.removesuffix('/mcp')}/readyz   Stop: Ctrl-C")
