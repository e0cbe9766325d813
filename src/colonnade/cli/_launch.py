"""Running the gateway for the CLI: imported only by the commands that serve (it loads the world)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import signal
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

import uvicorn
from mcp.server.stdio import stdio_server

from colonnade.cli.common import err_console, fail
from colonnade.config import Settings
from colonnade.contracts.load import ContractLoadError
from colonnade.contracts.validate import ContractInvalid
from colonnade.runtime.gateway import Gateway
from colonnade.store.store_errors import StoreError

__all__ = ["open_gateway", "run", "run_http", "run_stdio"]

logger = logging.getLogger("colonnade.gateway")


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
    # Start-up objects (modules, catalog, schemas) never die: keep them out of the collector's
    # full passes, which would otherwise stall the event loop mid-call as the heap grows.
    gc.collect()
    gc.freeze()
    try:
        yield gateway
    finally:
        await gateway.aclose()
        logger.info("gateway stopped: calls drained, state saved")


async def run_http(settings: Settings, *, banner: bool, snippet: bool = False) -> None:
    async with open_gateway(settings) as gateway:
        host, port = settings.server.host, settings.server.port
        config = uvicorn.Config(
            gateway.http_app(),
            host=host,
            port=port,
            log_level="warning",
            log_config=None,  # uvicorn's records go through the process's logging setup
            lifespan="on",
            http="httptools",
        )
        server = _GracefulServer(config)
        if banner:
            _print_banner(gateway, f"http://{host}:{port}/mcp", snippet)
        with contextlib.suppress(SystemExit):  # uvicorn exits when it cannot bind; we say why below
            await server.serve()
        if not server.started:
            fail(f"could not listen on {host}:{port}; is the port in use? Choose another with --port")


class _GracefulServer(uvicorn.Server):
    """uvicorn's server, minus re-raising SIGINT/SIGTERM once it has stopped.

    uvicorn stops serving on those signals and then raises the signal again, which kills the
    process before `open_gateway` can close the gateway: in-flight calls would not be drained,
    the routing index and learned co-occurrence not saved, pools not closed. A graceful stop is
    what orchestrators ask for with SIGTERM, so the gateway finishes its shutdown and exits 0.
    """

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


async def run_stdio(settings: Settings) -> None:
    async with open_gateway(settings) as gateway, stdio_server() as (read, write):
        sync = asyncio.create_task(gateway.sync.run()) if gateway.sync is not None else None
        gateway.servers.start()
        try:
            server = gateway.mcp.server  # calls run as the configured local principal
            await server.run(read, write, server.create_initialization_options())
        finally:
            if sync is not None:
                sync.cancel()


def _print_banner(gateway: Gateway, url: str, snippet: bool) -> None:
    err_console.print(
        f"[bold green]Colonnade[/bold green] serving {len(gateway.catalog)} tools at [bold]{url}[/bold]"
    )
    err_console.print(f"Catalog: {url.removesuffix('/mcp')}/ui/catalog")
    for entry in gateway.catalog.api_versions():
        if entry.active:
            err_console.print(f"  {entry.tenant}/{entry.api} {entry.version}: {entry.tools} tools")
    if snippet:
        config = {"mcpServers": {"colonnade": {"type": "http", "url": url}}}
        err_console.print("MCP client config (paste into your client's settings):")
        err_console.print(json.dumps(config, indent=2), markup=False, highlight=False)
        err_console.print(f"Health: {url.removesuffix('/mcp')}/readyz   Stop: Ctrl-C")
