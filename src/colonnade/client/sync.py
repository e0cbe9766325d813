"""`Colonnade`: the same client for code that does not run an event loop.

The async client runs on a private event loop in a daemon thread; each method submits its
coroutine there and waits. Transports are built on that loop (`Colonnade.rest(...)`), because an
HTTP client belongs to the loop it was made in.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from colonnade.calls.envelope import CallResult
from colonnade.client.agent import AsyncColonnade, CallOptions
from colonnade.client.backoff import Backoff
from colonnade.client.rest_transport import RestTransport
from colonnade.client.transport import Transport

__all__ = ["Colonnade"]

T = TypeVar("T")


class Colonnade:
    """`with Colonnade.rest("http://127.0.0.1:8765", token=...) as agent: agent.call(...)`."""

    def __init__(self, make_transport: Callable[[], Transport], *, backoff: Backoff | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="colonnade-client", daemon=True)
        self._thread.start()

        async def build() -> AsyncColonnade:
            return AsyncColonnade(make_transport(), backoff=backoff)

        self._agent = self._run(build())

    @classmethod
    def rest(cls, base_url: str, *, token: str | None = None, backoff: Backoff | None = None) -> Colonnade:
        return cls(lambda: RestTransport(base_url, token=token), backoff=backoff)

    def __enter__(self) -> Colonnade:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(
        self, tool: str, input: dict[str, Any] | None = None, options: CallOptions | None = None
    ) -> CallResult:
        return self._run(self._agent.call(tool, input, options))

    def prepare(
        self, tool: str, input: dict[str, Any] | None = None, options: CallOptions | None = None
    ) -> CallResult:
        return self._run(self._agent.prepare(tool, input, options))

    def commit(self, prepared: CallResult | str) -> CallResult:
        return self._run(self._agent.commit(prepared))

    def discard(self, prepared: CallResult | str) -> CallResult:
        return self._run(self._agent.discard(prepared))

    def skip(
        self, tool: str, reason: str, *, call_id: str | None = None, trace_id: str | None = None
    ) -> CallResult:
        return self._run(self._agent.skip(tool, reason, call_id=call_id, trace_id=trace_id))

    def wait_for_approval(self, pending: CallResult, options: CallOptions | None = None) -> CallResult:
        return self._run(self._agent.wait_for_approval(pending, options))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._run(self._agent.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def _run(self, work: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await work

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result()
