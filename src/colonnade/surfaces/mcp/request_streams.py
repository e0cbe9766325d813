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
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar

from mcp.server.streamable_http import StreamableHTTPServerTransport
from starlette.types import Message, Receive, Scope, Send

__all__ = [
    "WATCH_AFTER_S",
    "PerRequestTransport",
    "answering",
    "chosen",
    "until_disconnected",
    "wants_stream",
]


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
    own by default)."""

    @property
    def is_json_response_enabled(self) -> bool:
        choice = chosen()
        return bool(self.__dict__.get("is_json_response_enabled", False)) if choice is None else choice

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        self.__dict__["is_json_response_enabled"] = value


async def until_disconnected(
    serve: Callable[[Scope, Receive, Send], Awaitable[None]], scope: Scope, receive: Receive, send: Send
) -> None:
    """Serve a request, and stop serving it (cancelling its task) when the client goes away.

    Watching takes a task; a request answered within `WATCH_AFTER_S` (the fast path) never starts
    one and costs only a timer. A client that leaves sooner is noticed once that time has passed.
    """
    loop = asyncio.get_running_loop()
    serving = asyncio.current_task()
    assert serving is not None
    body_read = gone = False
    watcher: asyncio.Task[None] | None = None
    timer: asyncio.TimerHandle | None = None

    async def reading() -> Message:
        nonlocal body_read
        message = await receive()
        body_read = not message.get("more_body", False)
        return message

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        serving.cancel()

    def start() -> None:
        nonlocal watcher, timer
        if body_read:  # the client's next message can only be its disconnect
            watcher = loop.create_task(watch())
        else:
            timer = loop.call_later(WATCH_AFTER_S, start)

    timer = loop.call_later(WATCH_AFTER_S, start)
    try:
        await serve(scope, reading, send)
    except asyncio.CancelledError:
        if gone and serving.uncancel() == 0:
            return  # nobody is left to answer
        raise
    finally:
        timer.cancel()
        if watcher is not None:
            watcher.cancel()
