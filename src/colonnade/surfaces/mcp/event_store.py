"""Recent SSE events of an MCP endpoint, kept in memory so a client can resume a dropped stream.

With an event store the SDK sends a priming event (an id, no data) and a `retry` interval on every
response stream, and answers `GET` with `Last-Event-ID` by replaying what followed on that stream
(SEP-1699, 2025-11-25 era). Memory is bounded: the oldest events go first. Event ids are random,
so a client cannot name (and replay) an event of another client's stream. Each replica keeps its
own: a stream that was open on a replica that died cannot be resumed elsewhere, and its resumption
is answered 404 (`BoundedSessionManager`), so that the client stops waiting on it.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp_types import JSONRPCMessage

__all__ = ["MemoryEventStore"]


class MemoryEventStore(EventStore):
    def __init__(self, limit: int = 10_000) -> None:
        self._events: OrderedDict[str, tuple[str, JSONRPCMessage | None]] = OrderedDict()
        self._limit = limit

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        event_id = secrets.token_urlsafe(16)
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._limit:
            self._events.popitem(last=False)
        return event_id

    def knows(self, event_id: str) -> bool:
        """Whether this replica still has the event (a survivor never has another replica's)."""
        return event_id in self._events

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        entry = self._events.get(last_event_id)
        if entry is None:
            return None
        stream_id = entry[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id
