"""What a caller's resource subscriptions hold on a server, and that a session ending lets go of them.

A handshake-era caller of a server that speaks 2026-07-28 (a stdio server: no handshake-era twin)
subscribes with `resources/subscribe`, which holds the gateway's own `subscriptions/listen` on the
server for that resource. A session that ends without unsubscribing must not leave the listen
running: the announcer hands back what the session had subscribed to, and the watch lets go. In
process; the server side is a stand-in that records the listens started and stopped (the real
follow is tested end to end in tests/federation/test_resource_updates.py).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from colonnade.surfaces.mcp.announcer import Announcer
from colonnade.surfaces.mcp.proxy.resource_watch import ResourceWatch


class _Server:
    """What `ResourceWatch` reads of an upstream that speaks 2026-07-28, recording its listens."""

    name = "local"
    negotiated = "2026-07-28"

    def __init__(self) -> None:
        self.listening: set[str] = set()
        self.stopped: list[str] = []

    async def follow_resource(self, uri: str) -> None:
        self.listening.add(uri)
        try:
            await asyncio.Event().wait()
        finally:
            self.listening.discard(uri)
            self.stopped.append(uri)


async def test_the_last_watcher_gone_stops_the_listen_and_not_before() -> None:
    server = _Server()
    watch = ResourceWatch(server, shared=lambda uri: 0)  # type: ignore[arg-type]
    await watch.hold("test://a")
    await watch.hold("test://a")
    await watch.hold("test://b")
    await asyncio.sleep(0)
    assert server.listening == {"test://a", "test://b"}
    await watch.release_all(frozenset({"test://a", "test://b"}))
    await asyncio.sleep(0)
    assert server.listening == {"test://a"} and server.stopped == ["test://b"]
    await watch.release_all(frozenset({"test://a", "test://never-held"}))
    await asyncio.sleep(0)
    assert server.listening == set() and watch.watchers("test://a") == 0


class _Connection:
    """A handshake-era HTTP connection as the announcer keys it (weakly): its session id."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id


async def test_an_ended_session_hands_back_what_it_subscribed_to_once() -> None:
    announcer = Announcer()
    connection = _Connection("s-1")
    session: Any = SimpleNamespace(_connection=connection)
    ctx: Any = SimpleNamespace(protocol_version="2025-11-25", session=session)

    async def call_next(ctx: Any) -> dict[str, Any]:
        return {}

    await announcer.remember(ctx, call_next)
    announcer.subscribe(session, "test://a")
    announcer.subscribe(session, "test://b")
    announcer.subscribe(session, "test://b", on=False)
    assert announcer.subscribers("test://a") == 1
    assert announcer.forget("s-1") == frozenset({"test://a"})
    assert announcer.forget("s-1") == frozenset()  # told twice: nothing the second time
    assert announcer.subscribers("test://a") == 0 and announcer.remembered == 0
