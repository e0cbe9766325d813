"""MCP sessions are bounded per caller: a flood of `initialize` from one caller closes only its own
idle sessions, another caller's session-based client keeps working, idle sessions expire, a caller
whose sessions are all busy is refused with a retryable code and Retry-After, and a session answers
only the principal that opened it. Real gateway app on loopback, real SDK client, real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.datastructures import Headers
from starlette.types import Scope

from colonnade.config import RoutingSettings, Settings
from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal, PrincipalKind
from colonnade.runtime.gateway import Gateway
from colonnade.surfaces.app import HttpSurfaces, build_http_app
from colonnade.surfaces.edge import EdgeRefusal, OriginPolicy
from colonnade.surfaces.mcp.sessions import SessionLedger, SessionLimits
from tests.support.loopback import serve_in_thread

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "session-test", "version": "1"},
    },
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


async def _bearer(headers: Headers, scope: Scope) -> Principal | EdgeRefusal:
    """`Bearer <name>` is the agent <name>; no header is the anonymous loopback caller."""
    value = headers.get("authorization", "")
    if value.startswith("Bearer "):
        return Principal(PrincipalKind.AGENT, value.removeprefix("Bearer "))
    return ANONYMOUS_LOOPBACK


@dataclass
class Served:
    url: str
    ledger: SessionLedger
    gateway: Gateway

    def http(self, who: str | None = None, *, local_address: str | None = None) -> httpx2.AsyncClient:
        headers = {"authorization": f"Bearer {who}"} if who else {}
        transport = httpx2.AsyncHTTPTransport(local_address=local_address)
        return httpx2.AsyncClient(base_url=self.url, headers=headers, transport=transport, timeout=30)

    def wait_until(self, condition: str, check: object) -> None:
        deadline = time.monotonic() + 15
        while not check():  # type: ignore[operator]
            if time.monotonic() > deadline:
                raise AssertionError(f"never happened: {condition}")
            time.sleep(0.02)


@contextlib.contextmanager
def serve(limits: SessionLimits, *, session_streams: bool = True) -> Iterator[Served]:
    gateway = Gateway(Settings(routing=RoutingSettings(enabled=True)))  # lists the meta tools
    ledger = SessionLedger(limits)
    app = build_http_app(
        HttpSurfaces(gateway.mcp),
        origins=OriginPolicy.for_bind("127.0.0.1"),
        authenticate=_bearer,
        sessions=ledger,
        session_streams=session_streams,
    )
    with serve_in_thread(app, lifespan="on") as url:
        yield Served(url, ledger, gateway)


@pytest.fixture
def served() -> Iterator[Served]:
    with serve(SessionLimits(per_caller=4, total=8, idle_s=600)) as running:
        yield running


async def open_session(http: httpx2.AsyncClient) -> str:
    response = await http.post("/mcp", json=INITIALIZE, headers={"accept": ACCEPT})
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


async def ping(http: httpx2.AsyncClient, session_id: str) -> int:
    headers = {"accept": ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    response = await http.post("/mcp", json=PING, headers=headers)
    return response.status_code


@contextlib.asynccontextmanager
async def legacy_client(served: Served, who: str) -> AsyncIterator[Client]:
    async with (
        served.http(who) as http,
        Client(streamable_http_client(served.url + "/mcp", http_client=http), mode="legacy") as client,  # type: ignore[arg-type]
    ):
        yield client


async def test_a_flood_of_initialize_by_one_principal_does_not_stop_another(served: Served) -> None:
    async with served.http("flooder") as flooder:
        opened = [await open_session(flooder) for _ in range(40)]
    assert len(set(opened)) == 40  # every initialize got a session: its own oldest made room
    assert served.ledger.held("agent:flooder") == 4
    async with legacy_client(served, "bob") as client:
        listed = await client.list_tools()
        assert listed.tools, "the second caller's session-based client is served"
        assert served.ledger.held("agent:bob") == 1
    assert served.ledger.evicted == 36
    assert served.ledger.refused == 0
    # nothing is kept for a closed session: only the flooder's 4 remain known to the announcer
    served.wait_until(
        "the evicted sessions are forgotten", lambda: served.gateway.mcp.announcer.remembered == 4
    )


async def test_past_its_bound_a_caller_loses_its_own_least_recently_used_idle_session(served: Served) -> None:
    async with served.http("alice") as alice, served.http("bob") as bob:
        bobs = await open_session(bob)
        first, second, third, fourth = [await open_session(alice) for _ in range(4)]
        assert await ping(alice, first) == 200  # now `second` is the least recently used
        fifth = await open_session(alice)
        assert await ping(alice, second) == 404
        for kept in (first, third, fourth, fifth):
            assert await ping(alice, kept) == 200
        assert await ping(bob, bobs) == 200
    assert served.ledger.held("agent:alice") == 4


async def test_at_the_total_bound_the_biggest_holder_gives_way(served: Served) -> None:
    async with served.http("alice") as alice, served.http("bob") as bob, served.http("carol") as carol:
        alices = [await open_session(alice) for _ in range(4)]
        bobs = [await open_session(bob) for _ in range(3)]
        await open_session(carol)
        assert served.ledger.held() == 8
        await open_session(carol)  # the table is full: alice holds the most
        assert await ping(alice, alices[0]) == 404
        assert [await ping(bob, s) for s in bobs] == [200, 200, 200]
    assert (served.ledger.held("agent:alice"), served.ledger.held("agent:carol")) == (3, 2)


async def test_a_caller_whose_sessions_are_all_busy_is_refused_with_retry_after(served: Served) -> None:
    async with served.http("alice") as alice, contextlib.AsyncExitStack() as streams:
        sessions = [await open_session(alice) for _ in range(4)]
        for session_id in sessions:  # an open GET stream holds its session in flight
            headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
            stream = await streams.enter_async_context(alice.stream("GET", "/mcp", headers=headers))
            assert stream.status_code == 200
        refused = await alice.post("/mcp", json=INITIALIZE, headers={"accept": ACCEPT})
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        data = refused.json()["error"]["data"]
        assert data["code"] == "R-CAP-SESSIONS"
        assert data["details"] == {"reason": "per_caller", "limit": 4, "retry_after_ms": 1000}
        async with served.http("bob") as bob:  # the busy caller's bound is its own
            await open_session(bob)
    assert served.ledger.refused == 1


async def test_a_session_answers_only_the_principal_that_opened_it(served: Served) -> None:
    async with served.http("alice") as alice, served.http("mallory") as mallory:
        session_id = await open_session(alice)
        assert await ping(mallory, session_id) == 404
        assert await ping(alice, session_id) == 200


async def test_anonymous_callers_are_told_apart_by_address(served: Served) -> None:
    async with (
        served.http(local_address="127.0.0.2") as other,
        served.http(local_address="127.0.0.1") as local,
    ):
        for _ in range(6):
            await open_session(local)
        await open_session(other)
    assert served.ledger.held("anonymous:loopback@127.0.0.1") == 4
    assert served.ledger.held("anonymous:loopback@127.0.0.2") == 1


async def test_idle_sessions_expire() -> None:
    with serve(SessionLimits(per_caller=4, total=8, idle_s=0.3)) as running:
        async with running.http("alice") as alice:
            session_id = await open_session(alice)
            await asyncio.to_thread(
                running.wait_until, "the idle session closed", lambda: running.ledger.held() == 0
            )
            assert await ping(alice, session_id) == 404


def test_the_ledger_closes_the_least_recently_used_idle_session_and_never_a_busy_one() -> None:
    closed: list[str] = []
    ledger = SessionLedger(SessionLimits(per_caller=2, total=3))
    for session_id in ("a1", "a2"):
        ledger.hold(session_id, "alice", "agent:alice", lambda sid=session_id: closed.append(sid))
    ledger.leave("a2")  # a1 is still being served, a2 is idle
    assert ledger.make_room("alice") and closed == ["a2"]
    ledger.hold("a3", "alice", "agent:alice", lambda: closed.append("a3"))
    assert not ledger.make_room("alice")  # a1 and a3 are both in flight
    ledger.leave("a1")
    ledger.hold("b1", "bob", "agent:bob", lambda: closed.append("b1"))
    ledger.leave("b1")
    assert ledger.held() == 3
    assert ledger.make_room("carol") and closed == ["a2", "a1"]  # the biggest holder gives way
    assert (ledger.held("alice"), ledger.held("bob"), ledger.callers) == (1, 1, 2)


@pytest.mark.parametrize(
    ("session_streams", "elicitation", "media_type"),
    [
        (True, True, "text/event-stream"),
        (True, False, "application/json"),
        (False, True, "application/json"),
    ],
)
async def test_a_session_that_can_be_asked_answers_over_sse(
    session_streams: bool, elicitation: bool, media_type: str
) -> None:
    """SSE lets the gateway ask a session's client mid-call (elicitation); a client that cannot be
    asked keeps one JSON body per request, and stateless requests always do."""
    initialize = dict(INITIALIZE, params={**INITIALIZE["params"], "capabilities": {"elicitation": {}}})  # type: ignore[dict-item]
    with serve(SessionLimits(per_caller=4, total=8, idle_s=600), session_streams=session_streams) as running:
        async with running.http("streams") as http:
            opened = await http.post(
                "/mcp", json=initialize if elicitation else INITIALIZE, headers={"accept": ACCEPT}
            )
            assert opened.status_code == 200, opened.text
            session_id = opened.headers["mcp-session-id"]
            headers = {"accept": ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
            answer = await http.post("/mcp", json=PING, headers=headers)
            assert answer.status_code == 200 and answer.headers["content-type"].startswith(media_type)
            assert '"result"' in answer.text
            stateless = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
            modern = {"accept": ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
            listed = await http.post("/mcp", json=stateless, headers=modern)
            assert listed.status_code == 200 and listed.headers["content-type"].startswith("application/json")
