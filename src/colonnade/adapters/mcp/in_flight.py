"""The calls in flight on one downstream session, and which caller gets what the server sends.

Most of what a server sends during a call is tied to it: the answer, progress (by its token), an
input round. Three things are not: a handshake-era server's requests to the client (sampling,
elicitation, roots), its log messages, and the resumption of a stream it closed early. Requests
and logs go to the one call in flight that can take them (a question to a caller who can be asked,
a log line to a caller who opted in) and are refused or dropped when several could: the protocol
gives no way to tell them apart, and a guess would hand one caller's question to another. A
resumption is told by the `Last-Event-ID` the SDK's client resumes with, which the call's stream
carried.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import mcp_types as types
from mcp.client.session import ClientRequestContext
from mcp.shared.message import ClientMessageMetadata

from colonnade.mcp_relay.relay import Relay

__all__ = ["InFlight"]


class InFlight:
    def __init__(self) -> None:
        self._relays: list[Relay] = []
        self._resumable: dict[str, Relay] = {}

    def __len__(self) -> int:
        return len(self._relays)

    @contextlib.contextmanager
    def call(self, relay: Relay) -> Iterator[None]:
        """One call's time in flight."""
        self._relays.append(relay)
        try:
            yield
        finally:
            self._relays.remove(relay)
            self._resumable = {token: r for token, r in self._resumable.items() if r is not relay}

    def resumption(self, relay: Relay) -> ClientMessageMetadata:
        """Metadata that notes the event ids of the call's stream, to know it when it is resumed."""

        async def seen(token: str) -> None:
            self._resumable[token] = relay

        return ClientMessageMetadata(on_resumption_token_update=seen)

    async def resumed(self, token: str) -> None:
        """The SDK's client resumes a stream the server closed before answering: tell its caller."""
        relay = self._resumable.get(token)
        if relay is not None:
            await relay.stream_closed()

    # The ClientSession's callbacks for what a handshake-era server sends on its own.

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        relay = self._only(lambda r: r.log_level is not None)
        if relay is not None:
            await relay.log(params)

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        answer = await self._ask(types.CreateMessageRequest(params=params))
        assert isinstance(
            answer, types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData
        )
        return answer

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        answer = await self._ask(types.ElicitRequest(params=params))
        assert isinstance(answer, types.ElicitResult | types.ErrorData)
        return answer

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        answer = await self._ask(types.ListRootsRequest())
        assert isinstance(answer, types.ListRootsResult | types.ErrorData)
        return answer

    async def _ask(self, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
        relay = self._only(lambda r: r.can_ask)
        if relay is None:
            message = f"no caller can answer {request.method}: {self._why_nobody()}"
            return types.ErrorData(code=types.INVALID_REQUEST, message=message)
        return await relay.ask(request)

    def _why_nobody(self) -> str:
        """Why no single caller takes a question: no call, none that can be asked, or several that can."""
        calls, askable = len(self._relays), sum(relay.can_ask for relay in self._relays)
        if calls == 0:
            return "no call is in flight"
        if askable > 1:
            return f"{askable} calls in flight could, and nothing says whose it is"
        if calls == 1:
            return (
                "the caller of the call in flight cannot be asked (it declared none of elicitation,"
                " sampling or roots, or has no stream to be asked on)"
            )
        return f"none of the {calls} calls in flight has a caller that can be asked"

    def _only(self, accepts: Callable[[Relay], bool]) -> Relay | None:
        takers = [relay for relay in self._relays if accepts(relay)]
        return takers[0] if len(takers) == 1 else None
