"""Handshake-era MCP sessions that any replica serves: three gateway replicas on one PostgreSQL schema
and one Redis prefix, the official SDK client behind a round-robin balancer that sends every HTTP
request to the next replica. One `initialize`, then every request lands elsewhere and is served;
the session stays bound to its principal on every replica; a replica that stops leaves its
sessions to the survivors; a DELETE ends the session everywhere; the 2026-07-28 era needs none of
it; with Redis away a session this replica does not hold gets the spec's 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from colonnade.config import (
    AuthSettings,
    McpServerSettings,
    RoutingSettings,
    ServerSettings,
    Settings,
    SharedStateSettings,
)
from colonnade.governance.key_admin import KeyRequest
from colonnade.governance.principal import Principal
from tests.support.inprocess_replicas import Replica, private_schema, start_replica
from tests.support.machine_load import patient
from tests.support.mcp_servers import reference_http
from tests.support.redis_server import REDIS_UP_OP_TIMEOUT_S, OwnRedis
from tests.support.repo import ROOT
from tests.support.round_robin import RoundRobin

pytestmark = pytest.mark.postgres

ACCEPT = "application/json, text/event-stream"
HANDSHAKE = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "replicas", "version": "1"},
    },
}
OPERATOR = Principal.system("replica-test-operator")


@dataclass
class Cluster:
    replicas: list[Replica]
    redis_prefix: str

    @property
    def urls(self) -> list[str]:
        return [replica.url for replica in self.replicas]

    def key(self, owner: str) -> str:
        """An API key (shared by every replica through the database) for the agent `owner`."""
        admin = self.replicas[0].gateway.governance.key_admin
        assert admin is not None
        issued = self.replicas[0].run(admin.create(OPERATOR, KeyRequest(owner=owner, persona="admin")))
        return str(issued.token)

    def sessions_status(self, replica: Replica) -> dict[str, int]:
        status = replica.run(replica.gateway.status())
        return dict(status["shared_state"]["mcp_sessions"])


def _contract(backend_url: str, folder: Path) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "contracts" / "crm.yaml").read_text())
    data["backend"]["base_url"] = backend_url
    path = folder / "crm.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@contextlib.contextmanager
def cluster(
    postgres_url: str,
    redis_url: str,
    redis_prefix: str,
    backend_url: str,
    folder: Path,
    *,
    count: int = 3,
    servers: list[McpServerSettings] | None = None,
) -> Iterator[Cluster]:
    contract = _contract(backend_url, folder)
    replicas: list[Replica] = []
    with private_schema(postgres_url) as schema:
        try:
            for index in range(count):
                name = f"r{index + 1}"
                settings = Settings(
                    data_dir=folder / name,
                    database_url=postgres_url,
                    contracts=[contract] if index == 0 else [],
                    manifests_dir=None,
                    routing=RoutingSettings(enabled=False),
                    auth=AuthSettings(enabled=True),
                    server=ServerSettings(host="127.0.0.1", port=0),
                    servers=servers or [],
                    shared_state=SharedStateSettings(
                        redis_url=redis_url,
                        key_prefix=redis_prefix,
                        replica_id=name,
                        probe_interval_s=0.2,
                        op_timeout_s=REDIS_UP_OP_TIMEOUT_S,
                    ),
                )
                replicas.append(start_replica(name, settings, schema))
            yield Cluster(replicas, redis_prefix)
        finally:
            for replica in replicas:
                replica.stop(force=True)


@pytest.fixture
def three(
    postgres_url: str, redis_url: str, redis_prefix: str, backend_url: str, tmp_path: Path
) -> Iterator[Cluster]:
    with cluster(postgres_url, redis_url, redis_prefix, backend_url, tmp_path) as running:
        yield running


class Counting(RoundRobin):
    """The balancer, also counting the `initialize` requests that went through it."""

    initializes = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and b'"method":"initialize"' in request.content.replace(b" ", b""):
            self.initializes += 1
        return await super().handle_async_request(request)


@contextlib.asynccontextmanager
async def balanced_client(
    urls: list[str], token: str, *, mode: str, path: str = "/mcp", **options: Any
) -> AsyncIterator[tuple[Client, Counting]]:
    balancer = Counting(urls)
    headers = {"authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(transport=balancer, headers=headers, timeout=patient(30)) as http,
        Client(streamable_http_client(urls[0] + path, http_client=http), mode=mode, **options) as client,  # type: ignore[arg-type]
    ):
        yield client, balancer


def _search_tool(names: list[str]) -> str:
    (name,) = [name for name in names if name.endswith("search_customers")]
    return name


async def _work(client: Client, requests: int) -> None:
    """`requests` requests, alternating listings and tool calls; each must succeed."""
    tool = _search_tool([tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools])
    for index in range(requests - 1):
        if index % 2:
            listed = await client.list_tools(cache_mode="bypass")
            assert any(t.name == tool for t in listed.tools)
        else:
            result = await client.call_tool(tool, {"q": "", "limit": 2})
            assert not result.is_error, result
            assert result.structured_content is not None and "customers" in result.structured_content


async def test_a_handshake_era_session_crosses_replicas_on_every_request(three: Cluster) -> None:
    token = three.key("crossing-agent")
    async with balanced_client(three.urls, token, mode="legacy") as (client, balancer):
        await _work(client, 200)
        assert balancer.initializes == 1, "the session was opened once and never again"
    served = [balancer.sent[url] for url in three.urls]
    assert all(count >= 60 for count in served), served  # every replica served a third of the requests
    restored = [three.sessions_status(replica)["restored_here"] for replica in three.replicas]
    assert sum(1 for count in restored if count >= 1) >= 2, restored  # two replicas took it over


async def test_the_stateless_era_crosses_replicas_as_it_is(three: Cluster) -> None:
    token = three.key("modern-agent")
    async with balanced_client(three.urls, token, mode="auto") as (client, balancer):
        await _work(client, 200)
        assert balancer.initializes == 0
    assert all(balancer.sent[url] >= 60 for url in three.urls), balancer.sent
    # No session was recorded or rebuilt anywhere: the era carries its state in every request.
    for replica in three.replicas:
        status = three.sessions_status(replica)
        assert status["records_written"] == 0 and status["restored_here"] == 0, status


async def _open(http: httpx2.AsyncClient, url: str, capabilities: dict[str, object] | None = None) -> str:
    opening = {**INITIALIZE, "params": {**INITIALIZE["params"], "capabilities": capabilities or {}}}  # type: ignore[dict-item]
    response = await http.post(url + "/mcp", json=opening, headers={"accept": ACCEPT})
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    sent = await http.post(url + "/mcp", json=initialized, headers=_in_session(session_id))
    assert sent.status_code == 202, sent.text
    return session_id


def _in_session(session_id: str) -> dict[str, str]:
    return {"accept": ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": HANDSHAKE}


async def _list(http: httpx2.AsyncClient, url: str, session_id: str) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    return await http.post(url + "/mcp", json=body, headers=_in_session(session_id))


async def test_a_session_answers_only_its_principal_on_every_replica(three: Cluster) -> None:
    alice, mallory = three.key("alice"), three.key("mallory")
    first, second, third = three.urls
    async with (
        httpx2.AsyncClient(headers={"authorization": f"Bearer {alice}"}, timeout=30) as owner,
        httpx2.AsyncClient(headers={"authorization": f"Bearer {mallory}"}, timeout=30) as thief,
    ):
        session_id = await _open(owner, first)
        # Another principal presenting the id is told the session does not exist: where it was opened,
        # where no replica holds it yet, and where the owner's own requests already rebuilt it.
        assert (await _list(thief, first, session_id)).status_code == 404
        assert (await _list(thief, second, session_id)).status_code == 404
        assert (await _list(owner, third, session_id)).status_code == 200
        assert (await _list(thief, third, session_id)).status_code == 404
        assert (await _list(owner, second, session_id)).status_code == 200
        assert (await _list(thief, second, session_id)).status_code == 404
        unknown = await _list(owner, second, "f" * 32)
        assert unknown.status_code == 404 and unknown.json()["error"]["message"] == "Session not found"


async def test_a_session_ended_by_its_client_ends_on_every_replica(three: Cluster) -> None:
    token = three.key("leaving-agent")
    first, second, third = three.urls
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http:
        session_id = await _open(http, first)
        assert (await _list(http, second, session_id)).status_code == 200  # second holds a copy now
        ended = await http.delete(third + "/mcp", headers=_in_session(session_id))
        assert ended.status_code == 200, ended.text
        # The record went before the answer; the copies are closed over the fan-out within moments.
        deadline = time.monotonic() + patient(5)
        statuses: list[int] = []
        while time.monotonic() < deadline:
            statuses = [(await _list(http, url, session_id)).status_code for url in (first, second)]
            if statuses == [404, 404]:
                break
            await asyncio.sleep(0.05)
        assert statuses == [404, 404]


async def test_a_stopped_replica_leaves_its_sessions_to_the_survivors(three: Cluster) -> None:
    token = three.key("surviving-agent")
    opener = three.replicas[0]
    async with balanced_client(three.urls, token, mode="legacy") as (client, balancer):
        await _work(client, 20)
        held_before = three.sessions_status(opener)["held"]
        assert held_before == 1
        opener.stop(force=True)  # its connections dropped at once, as a dying process's would
        await _work(client, 60)
        assert balancer.initializes == 1, "the session went on at the survivors without a new initialize"
    assert balancer.refused >= 1  # requests that met the stopped replica went to the next one
    survivors = three.replicas[1:]
    assert all(balancer.sent[replica.url] >= 30 for replica in survivors), balancer.sent


async def test_a_log_level_set_on_one_replica_holds_where_the_session_goes_next(three: Cluster) -> None:
    token = three.key("logging-agent")
    first, second = three.urls[:2]
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http:
        session_id = await _open(http, first)
        body = {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "debug"}}
        assert (
            await http.post(first + "/mcp", json=body, headers=_in_session(session_id))
        ).status_code == 200
        assert (await _list(http, second, session_id)).status_code == 200
    levels = list(three.replicas[1].gateway.mcp._levels.values())  # the connection rebuilt on `second`
    assert levels == ["debug"]


def test_with_redis_away_a_session_stays_on_its_replica_and_others_answer_404(
    postgres_url: str, redis_prefix: str, backend_url: str, tmp_path: Path, own_redis: OwnRedis
) -> None:
    with cluster(postgres_url, own_redis.url, redis_prefix, backend_url, tmp_path, count=2) as two:
        token = two.key("degraded-agent")
        own_redis.stop()
        first, second = two.urls
        headers = {"authorization": f"Bearer {token}"}

        async def scenario() -> tuple[int, int, int]:
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                session_id = await _open(http, first)
                here = (await _list(http, first, session_id)).status_code
                elsewhere = await _list(http, second, session_id)
                assert elsewhere.json()["error"]["message"] == "Session not found"
                # The client initializes again and is served.
                again = await _open(http, second)
                return here, elsewhere.status_code, (await _list(http, second, again)).status_code

        assert asyncio.run(scenario()) == (200, 404, 200)
        status = two.replicas[0].run(two.replicas[0].gateway.status())["shared_state"]
        assert status["degraded"] is True
        assert status["mcp_sessions"]["opened_local_only"] >= 1, status
        assert json.dumps(status)  # the status stays JSON for /v1/status


async def test_a_get_stream_on_a_stopped_replica_ends_and_the_session_streams_on_a_survivor(
    three: Cluster,
) -> None:
    token = three.key("streaming-agent")
    first, second = three.urls[:2]
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http:
        session_id = await _open(http, first)
        stream_headers = {**_in_session(session_id), "accept": "text/event-stream"}
        async with http.stream("GET", first + "/mcp", headers=stream_headers) as stream:
            assert stream.status_code == 200
            three.replicas[0].stop(force=True)

            async def to_the_end() -> None:
                with contextlib.suppress(httpx2.HTTPError):  # cut mid-stream, or closed: never hung
                    async for _ in stream.aiter_bytes():
                        pass

            await asyncio.wait_for(to_the_end(), patient(10))  # the stream ends with its replica
        # A resumption naming an event of the dead replica's stream: the events are gone, and the
        # answer says so (the SDK would leave the client reopening an empty stream); the session goes on.
        resumed = await http.get(second + "/mcp", headers={**stream_headers, "last-event-id": "gone-event"})
        assert resumed.status_code == 404 and "Stream not found" in resumed.json()["error"]["message"]
        assert (await _list(http, second, session_id)).status_code == 200
        async with http.stream("GET", second + "/mcp", headers=stream_headers) as fresh:
            assert fresh.status_code == 200
            assert fresh.headers["content-type"].startswith("text/event-stream")


async def test_a_session_that_can_be_asked_is_answered_over_sse_on_every_replica(three: Cluster) -> None:
    """A client that declares elicitation gets its session's requests over SSE (so the gateway can ask
    it mid-call): on the replica that rebuilt the session too, from its very first request there."""
    token = three.key("asked-agent")
    first, second = three.urls[:2]
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30) as http:
        asked = await _open(http, first, {"elicitation": {}})
        plain = await _open(http, first)
        for url in (second, first, second):
            answer = await _list(http, url, asked)
            assert answer.status_code == 200 and answer.headers["content-type"].startswith(
                "text/event-stream"
            )
            answer = await _list(http, url, plain)
            assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")


def test_a_session_of_a_server_s_own_endpoint_crosses_replicas_with_its_log_level(
    postgres_url: str, redis_url: str, redis_prefix: str, backend_url: str, tmp_path: Path
) -> None:
    """`/servers/{name}/mcp` sessions are rebuilt the same way (records apart from `/mcp`'s). The
    server's log messages (`info`) are relayed by whichever replica serves the call as the session's
    level says: none at `warning` (set through one replica; the others would relay every level
    without it), all of them once `info` is set through another replica."""
    with reference_http(tmp_path / "reference.log") as upstream:
        servers = [McpServerSettings(name="ref", transport="http", url=upstream)]
        with cluster(postgres_url, redis_url, redis_prefix, backend_url, tmp_path, servers=servers) as three:
            token = three.key("endpoint-agent")
            heard: list[str] = []

            async def log(params: Any) -> None:
                heard.append(str(params.level))

            async def logged_calls(client: Client) -> None:
                for _ in range(3):  # three requests in a row: one lands on each replica
                    logged = await client.call_tool("test_tool_with_logging", {})
                    assert not logged.is_error, logged

            async def scenario() -> tuple[Counting, int]:
                async with balanced_client(
                    three.urls, token, mode="legacy", path="/servers/ref/mcp", logging_callback=log
                ) as (client, balancer):
                    tools = {tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools}
                    assert {"test_simple_text", "test_tool_with_logging"} <= tools
                    for _ in range(6):  # every replica holds the session now
                        simple = await client.call_tool("test_simple_text", {})
                        assert not simple.is_error, simple
                    await client.set_logging_level("warning")
                    await asyncio.sleep(patient(0.5))  # the change fan-out reaches the other replicas
                    await logged_calls(client)
                    quiet = len(heard)
                    await client.set_logging_level("info")
                    await asyncio.sleep(patient(0.5))
                    await logged_calls(client)
                    assert balancer.initializes == 1
                    return balancer, quiet

            balancer, quiet = asyncio.run(scenario())
            assert all(balancer.sent[url] >= 5 for url in three.urls), balancer.sent
            assert quiet == 0, heard
            assert heard == ["info"] * 9, heard  # three log messages per call, on every replica
            restored = [three.sessions_status(replica)["restored_here"] for replica in three.replicas]
            assert sum(restored) >= 2, restored
