"""`kill -9` of the replica that opened a handshake-era MCP session: the session goes on at the
survivor. Two `colonnade serve` processes on one PostgreSQL database (its own) and one Redis key
prefix, the official SDK client behind a round-robin balancer (`tests/support/round_robin.py`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from colonnade.store import create_store_engine
from examples.demo_backend import create_app
from tests.support.loopback import free_port, serve_in_thread, start_process, stop_process, wait_http
from tests.support.machine_load import patient
from tests.support.repo import ROOT
from tests.support.round_robin import RoundRobin

pytestmark = pytest.mark.postgres

COLONNADE = Path(sys.executable).with_name("colonnade")


def _admin(postgres_url: str, statement: str) -> None:
    async def run() -> None:
        engine = create_store_engine(postgres_url)
        try:
            async with engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.exec_driver_sql(statement)
        finally:
            await engine.dispose()

    asyncio.run(run())


@pytest.fixture
def database(postgres_url: str) -> Iterator[str]:
    """A database of its own (the replicas are processes: a private schema cannot be handed to them)."""
    name = f"colonnade_sessions_{uuid.uuid4().hex[:10]}"
    _admin(postgres_url, f'CREATE DATABASE "{name}"')
    try:
        yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        _admin(postgres_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def backend_url(tmp_path: Path) -> Iterator[str]:
    with serve_in_thread(create_app(tmp_path / "demo.db"), lifespan="on") as url:
        yield url


def _replica(name: str, folder: Path, env: dict[str, str]) -> tuple[str, object]:
    port = free_port()
    log = folder / f"{name}.log"
    proc = start_process([str(COLONNADE), "serve", "--port", str(port)], log, cwd=folder, env=env)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/readyz", proc, log=log)
    return url, proc


async def _work(client: Client, requests: int) -> None:
    names = [tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools]
    (tool,) = [name for name in names if name.endswith("search_customers")]
    for index in range(requests):
        if index % 2:
            assert (await client.list_tools(cache_mode="bypass")).tools
        else:
            result = await client.call_tool(tool, {"q": "", "limit": 1})
            assert not result.is_error, result


def test_kill_9_of_the_opening_replica_leaves_its_session_to_the_survivor(
    database: str, redis_url: str, redis_prefix: str, backend_url: str, tmp_path: Path
) -> None:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    data["backend"]["base_url"] = backend_url
    contract = tmp_path / "crm.yaml"
    contract.write_text(yaml.safe_dump(data, sort_keys=False))
    base = {
        **os.environ,
        "COLONNADE_DATABASE_URL": database,
        "COLONNADE_SHARED_STATE__REDIS_URL": redis_url,
        "COLONNADE_SHARED_STATE__KEY_PREFIX": redis_prefix,
    }
    procs = []
    try:
        urls = []
        for name, contracts in (("r1", [str(contract)]), ("r2", [])):
            folder = tmp_path / name
            folder.mkdir()
            env = {
                **base,
                "COLONNADE_DATA_DIR": str(folder / "data"),
                "COLONNADE_CONTRACTS": json.dumps(contracts),
            }
            url, proc = _replica(name, folder, env)
            urls.append(url)
            procs.append(proc)

        async def scenario() -> RoundRobin:
            balancer = RoundRobin(urls)
            async with (
                httpx2.AsyncClient(transport=balancer, timeout=patient(30)) as http,
                Client(streamable_http_client(urls[0] + "/mcp", http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
            ):
                await _work(client, 10)
                procs[0].send_signal(signal.SIGKILL)  # the replica that answered `initialize`
                procs[0].wait(timeout=patient(10))
                await _work(client, 40)
            return balancer

        balancer = asyncio.run(scenario())
        assert balancer.refused >= 1  # requests met the dead replica and went on to the survivor
        assert balancer.sent[urls[1]] >= 40
    finally:
        for proc in procs:
            stop_process(proc)  # type: ignore[arg-type]
