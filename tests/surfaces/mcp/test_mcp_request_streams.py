"""The per-request JSON-or-SSE choice and the leave watch of JSON-answered requests, in process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.server.lowlevel.server import Server
from starlette.types import Message

from colonnade.governance.principal import ANONYMOUS_LOOPBACK, Principal, PrincipalKind
from colonnade.surfaces.edge import PRINCIPAL_KEY, REQUEST_BODY_KEY
from colonnade.surfaces.mcp.request_streams import (
    WATCH_AFTER_S,
    LeaveWatch,
    PerRequestTransport,
    answering,
    chosen,
    wants_stream,
)
from colonnade.surfaces.mcp.sessions import BoundedSessionManager, SessionLedger


@pytest.mark.parametrize(
    ("body", "streams"),
    [
        (None, False),
        (b'{"method":"tools/call","params":{"name":"t","arguments":{}}}', False),
        (b'{"method":"tools/call","params":{"_meta":{"progressToken":7}}}', True),
        (b'{"params":{"_meta":{"io.modelcontextprotocol/logLevel":"info"}}}', True),
        (b'{"params":{"arguments":{"note":"progress token"}}}', False),
    ],
)
def test_a_body_asks_for_a_stream_by_its_progress_token_or_log_level(
    body: bytes | None, streams: bool
) -> None:
    assert wants_stream(body) is streams


async def test_a_choice_holds_inside_its_block_and_not_in_tasks_once_it_ended() -> None:
    assert chosen() is None
    seen: list[bool | None] = []
    ended = asyncio.Event()

    async def later() -> None:  # a task the request started, like a session's message router
        seen.append(chosen())
        await ended.wait()
        seen.append(chosen())

    with answering(True):
        assert chosen() is True
        task = asyncio.create_task(later())
        await asyncio.sleep(0)
    ended.set()
    await task
    assert seen == [True, None]
    assert chosen() is None


def test_the_transport_reads_the_request_choice_over_its_own_setting() -> None:
    transport = PerRequestTransport.__new__(PerRequestTransport)
    transport.is_json_response_enabled = False
    assert transport.is_json_response_enabled is False
    with answering(True):
        assert transport.is_json_response_enabled is True
    with answering(None):
        assert transport.is_json_response_enabled is False


class Client:
    """An ASGI client: the body once, then (when told) its disconnect."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()
        self.body_sent = False
        self.receives = 0

    async def receive(self) -> Message:
        self.receives += 1
        if not self.body_sent:
            self.body_sent = True
            return {"type": "http.request", "body": b"{}", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        return None


async def test_a_request_whose_client_leaves_is_cancelled() -> None:
    client = Client()
    cancelled = asyncio.Event()

    async def hang(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    serving = asyncio.create_task(LeaveWatch().serve(hang, {}, client.receive, client.send))
    await asyncio.sleep(WATCH_AFTER_S * 2)
    client.gone.set()
    await asyncio.wait_for(serving, 2)  # ends quietly: nobody is left to answer
    assert cancelled.is_set()


async def test_a_request_answered_in_time_never_watches_its_client() -> None:
    client = Client()

    async def quick(scope: Any, receive: Any, send: Any) -> None:
        await receive()

    await LeaveWatch().serve(quick, {}, client.receive, client.send)
    await asyncio.sleep(WATCH_AFTER_S * 2)
    assert client.receives == 1  # the body only: no watcher asked for more


async def test_a_cancellation_from_elsewhere_still_propagates() -> None:
    client = Client()

    async def hang(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.Event().wait()

    serving = asyncio.create_task(LeaveWatch().serve(hang, {}, client.receive, client.send))
    await asyncio.sleep(WATCH_AFTER_S * 2)
    serving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await serving


async def test_the_sweeper_runs_only_while_requests_are_in_flight() -> None:
    watch = LeaveWatch()
    client = Client()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.sleep(WATCH_AFTER_S * 3)

    await watch.serve(slow, {}, client.receive, client.send)
    assert client.receives == 2  # the body, then the watch of a request that ran past the bound
    await asyncio.sleep(WATCH_AFTER_S)
    assert watch._sweeper is None


def test_only_a_live_session_of_its_own_principal_remembers_a_log_level() -> None:
    """`logging/setLevel` to a session id nobody holds, or held by another principal, is not kept:
    forged ids would otherwise pile up in the manager for ever (it forgets a session when it ends)."""
    ledger = SessionLedger()
    manager = BoundedSessionManager(Server("levels"), ledger, json_response=True)
    set_level = b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}'

    def scope(session_id: str, who: Principal = ANONYMOUS_LOOPBACK) -> dict[str, Any]:
        headers = [
            (b"mcp-session-id", session_id.encode()),
            (b"accept", b"application/json, text/event-stream"),
        ]
        state = {REQUEST_BODY_KEY: set_level, PRINCIPAL_KEY: who}
        return {"type": "http", "method": "POST", "headers": headers, "state": state}

    for number in range(1_000):
        manager._answer_as(scope(f"forged-{number}"))
    ledger.hold("live", "owner", ANONYMOUS_LOOPBACK.key, lambda: None)
    manager._answer_as(scope("live", Principal(PrincipalKind.AGENT, "mallory")))
    assert manager._logging == set()
    manager._answer_as(scope("live"))
    assert manager._logging == {"live"}
