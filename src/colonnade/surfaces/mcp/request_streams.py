"""JSON body or SSE stream, decided per request rather than per session manager or session.

The SDK answers every request of a session manager (2026-07-28) or of a session (handshake era)
the same way: one JSON body, or an SSE stream. A JSON body is the fast path but carries only the
answer, so a caller that asked for progress or log messages hears none of them, and a 2026-07-28
caller cannot cancel by closing the stream (the SDK watches the connection only on its SSE path).
Here the choice is made for each request, in the request's own task (a context variable the SDK's
reads of `json_response` / `is_json_response_enabled` consult).

The variable holds a mutable cell that is emptied when the request ends: a task the SDK starts
while serving a request (a session's message router, started by its opening request) copies the
context, and must see the session's own setting once that request is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

from mcp.server.streamable_http import StreamableHTTPServerTransport
from starlette.types import Message, Receive, Scope, Send

__all__ = ["WATCH_AFTER_S", "LeaveWatch", "PerRequestTransport", "answering", "chosen", "wants_stream"]


class _Choice:
    __slots__ = ("json",)

    def __init__(self, json: bool | None) -> None:
        self.json = json


_CHOICE: ContextVar[_Choice | None] = ContextVar("colonnade_mcp_json_body", default=None)
# How a request asks for what only a stream can carry (the key as clients send it in `_meta`); a
# byte search of the body the edge already read, so a plain request pays no JSON parsing for it. A
# false match (the words inside arguments) costs only a stream.
_STREAM_MARKERS = (b'"progressToken"', b"/logLevel")
WATCH_AFTER_S = 0.05
"""How long a request answered with one JSON body runs before its connection is watched."""


def chosen() -> bool | None:
    """This request's choice: True for one JSON body, False for SSE, None for the default."""
    choice = _CHOICE.get()
    return None if choice is None else choice.json


@contextlib.contextmanager
def answering(json: bool | None) -> Iterator[None]:
    """Serve the request inside this block with one JSON body (True) or over SSE (False)."""
    choice = _Choice(json)
    token = _CHOICE.set(choice)
    try:
        yield
    finally:
        choice.json = None
        _CHOICE.reset(token)


def wants_stream(body: bytes | None) -> bool:
    """Whether a request body names a progress token or (2026-07-28) a log level in its `_meta`."""
    return body is not None and any(marker in body for marker in _STREAM_MARKERS)


class PerRequestTransport(StreamableHTTPServerTransport):
    """The SDK's handshake-era transport, whose JSON-or-SSE flag is the request's choice (the session's
    own by default), and which says when it ends (`on_terminated`, with the session's id): every way
    a session ends (DELETE, idle timeout, eviction, a failed opening) terminates its transport."""

    on_terminated: Callable[[str], None] | None = None

    async def terminate(self) -> None:
        try:
            await super().terminate()
        finally:
            if self.on_terminated is not None and self.mcp_session_id is not None:
                self.on_terminated(self.mcp_session_id)

    @property
    def is_json_response_enabled(self) -> bool:
        choice = chosen()
        return bool(self.__dict__.get("is_json_response_enabled", False)) if choice is None else choice

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        self.__dict__["is_json_response_enabled"] = value


class _Served:
    """One request served with one JSON body, as `LeaveWatch` sees it."""

    __slots__ = ("body_read", "gone", "receive", "started", "watcher")

    def __init__(self, receive: Receive, started: float) -> None:
        self.receive = receive
        self.started = started
        self.body_read = self.gone = False
        self.watcher: asyncio.Task[None] | None = None

    async def reading(self) -> Message:
        message = await self.receive()
        self.body_read = not message.get("more_body", False)
        return message

    async def watch(self, serving: asyncio.Task[Any]) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self.gone = True
        serving.cancel()


class LeaveWatch:
    """Stops serving a request (cancelling its task) when its client goes away.

    Watching a client takes a task of its own; a request answered within `WATCH_AFTER_S` (the fast
    path) never gets one: one sweeper, running while such requests are in flight, starts the watch
    of those that have run longer. A client that leaves sooner is noticed then.
    """

    def __init__(self, after_s: float = WATCH_AFTER_S) -> None:
        self.after_s = after_s
        self._serving: dict[asyncio.Task[Any], _Served] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def serve(
        self,
        serve: Callable[[Scope, Receive, Send], Awaitable[None]],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        served = _Served(receive, time.monotonic())
        self._serving[task] = served
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        try:
            await serve(scope, served.reading, send)
        except asyncio.CancelledError:
            if served.gone and task.uncancel() == 0:
                return  # nobody is left to answer
            raise
        finally:
            del self._serving[task]
            if served.watcher is not None:
                served.watcher.cancel()

    async def _sweep(self) -> None:
        try:
            while self._serving:
                await asyncio.sleep(self.after_s / 2)
                due = time.monotonic() - self.after_s
                for task, served in self._serving.items():
                    # once its body is read, the client's next message can only be its disconnect
                    if served.watcher is None and served.body_read and served.started <= due:
                        served.watcher = asyncio.create_task(served.watch(task))
        finally:
            self._sweeper = None
