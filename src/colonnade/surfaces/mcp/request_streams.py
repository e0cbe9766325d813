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

import anyio
from mcp.server.streamable_http import StreamableHTTPServerTransport
from starlette.types import Message, Receive, Scope, Send

__all__ = ["PerRequestTransport", "answering", "chosen", "until_disconnected", "wants_stream"]


class _Choice:
    __slots__ = ("json",)

    def __init__(self, json: bool | None) -> None:
        self.json = json


_CHOICE: ContextVar[_Choice | None] = ContextVar("colonnade_mcp_json_body", default=None)
# How a request asks for what only a stream can carry (the key as clients send it in `_meta`); a
# byte search of the body the edge already read, so a plain request pays no JSON parsing for it. A
# false match (the words inside arguments) costs only a stream.
_STREAM_MARKERS = (b'"progressToken"', b"/logLevel")


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
    """Serve a request, and stop serving it (cancelling its handler) when the client goes away.

    The client's messages are watched only once the request's body has been read by `serve`.
    """
    read = asyncio.Event()

    async def reading() -> Message:
        message = await receive()
        if not message.get("more_body", False):
            read.set()
        return message

    async def watch(serving: anyio.CancelScope) -> None:
        await read.wait()
        while (await receive())["type"] != "http.disconnect":
            pass
        serving.cancel()

    with anyio.CancelScope() as serving:
        watcher = asyncio.create_task(watch(serving))
        try:
            await serve(scope, reading, send)
        finally:
            watcher.cancel()
