"""Gateway replicas in one test process: each its own thread, event loop and HTTP server, all on one
PostgreSQL schema and one Redis key prefix, as replicas behind a balancer would be.

`start_replica` opens the gateway as `colonnade serve` does (`Gateway.open`, uvloop) on an engine
in the test's private schema; `Replica.stop()` shuts its app down (sessions end as at a restart),
`stop(force=True)` drops its connections at once, as a dying process would.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
import uvloop

from colonnade.config import Settings
from colonnade.runtime.gateway import Gateway
from colonnade.store import create_store_engine
from tests.support.databases import schema_connect_args
from tests.support.machine_load import patient

__all__ = ["Replica", "private_schema", "start_replica"]


@dataclass
class Replica:
    name: str
    url: str
    gateway: Gateway
    loop: asyncio.AbstractEventLoop
    server: uvicorn.Server
    thread: threading.Thread

    def run(self, work: Any, timeout: float = 30) -> Any:
        """Run a coroutine on this replica's loop (its gateway's objects live there)."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(patient(timeout))

    def stop(self, *, force: bool = False) -> None:
        if not self.thread.is_alive():
            return
        self.server.force_exit = force
        self.server.should_exit = True
        self.thread.join(patient(20))


@contextmanager
def private_schema(postgres_url: str) -> Iterator[str]:
    """A schema of its own on the test database, dropped afterwards."""
    schema = f"colonnade_test_{uuid.uuid4().hex[:12]}"

    async def run(statement: str) -> None:
        admin = create_store_engine(postgres_url)
        try:
            async with admin.begin() as connection:
                await connection.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
                await connection.exec_driver_sql(statement)
        finally:
            await admin.dispose()

    asyncio.run(run(f'CREATE SCHEMA "{schema}"'))
    try:
        yield schema
    finally:
        asyncio.run(run(f'DROP SCHEMA "{schema}" CASCADE'))


def start_replica(name: str, settings: Settings, schema: str) -> Replica:
    """Open a gateway on `schema` and serve it on a free loopback port, in a thread of its own."""
    # IPPROTO_TCP, as uvicorn makes it: asyncio sets TCP_NODELAY only then (else 40 ms delayed ACKs)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    state: dict[str, Any] = {}

    async def main() -> None:
        engine = create_store_engine(
            settings.effective_database_url, connect_args=schema_connect_args(schema)
        )
        gateway = await Gateway.open(settings, engine=engine)
        try:
            config = uvicorn.Config(
                gateway.http_app(),
                log_level="warning",
                lifespan="on",
                access_log=False,
                timeout_graceful_shutdown=2,
            )
            server = uvicorn.Server(config)
            state.update(gateway=gateway, server=server, loop=asyncio.get_running_loop())
            await server.serve(sockets=[sock])
        finally:
            await gateway.aclose()
            sock.close()

    def thread_main() -> None:
        try:
            uvloop.run(main())
        except BaseException as exc:  # surfaced to the test below
            state["error"] = exc

    thread = threading.Thread(target=thread_main, name=f"replica-{name}-{uuid.uuid4().hex[:4]}", daemon=True)
    thread.start()
    deadline = time.monotonic() + patient(60)
    while not (state.get("server") and state["server"].started):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"replica {name} did not start: {state.get('error')!r}")
        time.sleep(0.01)
    return Replica(name, f"http://127.0.0.1:{port}", state["gateway"], state["loop"], state["server"], thread)
