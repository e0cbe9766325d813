"""Answer what is not JSON-RPC on stdio: -32700 for a line that is not JSON, -32600 for the rest.

The SDK's stdio transport hands the server an exception for such a line, and the server drops it,
so the client waits for an answer that never comes. This read stream answers it instead (id null
unless the line carried one), as JSON-RPC 2.0 asks, and passes every message through unchanged.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


class _Reads(Protocol):
    """What this stream needs of the transport's read stream (the SDK's protocol is private)."""

    async def receive(self) -> SessionMessage | Exception: ...

    async def aclose(self) -> None: ...


class _Writes(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


__all__ = ["AnsweringMalformed", "malformed_answer"]

_PARSE_HINT = "not JSON: send one JSON-RPC 2.0 message per line"
_INVALID_HINT = 'not a JSON-RPC 2.0 message: send {"jsonrpc": "2.0", "id": ..., "method": ...}'


def malformed_answer(problem: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error answering a line the transport could not read; None for a blank line."""
    errors: list[Any] = list(problem.errors()) if isinstance(problem, ValidationError) else []
    first: dict[str, Any] = dict(errors[0]) if errors else {}
    if first.get("type") == "json_invalid":
        if isinstance(first.get("input"), str) and not first["input"].strip():
            return None
        error = types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {_PARSE_HINT}")
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    where = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(message)'}: {e['msg']}" for e in errors[:3])
    message = f"Invalid Request: {_INVALID_HINT}" + (f" ({where})" if where else "")
    error = types.ErrorData(code=types.INVALID_REQUEST, message=message)
    return types.JSONRPCError(jsonrpc="2.0", id=_request_id(errors), error=error)


def _request_id(errors: list[Any]) -> int | str | None:
    for error in errors:
        value = error.get("input")
        if isinstance(value, dict):
            ident = value.get("id")
            if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
                return ident
    return None


class AnsweringMalformed:
    """The server's read stream: messages pass on; an unreadable line is answered on `write`."""

    def __init__(self, read: _Reads, write: _Writes) -> None:
        self._read = read
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the SDK's context streams carry it)."""
        return getattr(self._read, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._read.receive()
            if not isinstance(item, Exception):
                return item
            answer = malformed_answer(item)
            if answer is not None:
                await self._write.send(SessionMessage(answer))

    async def aclose(self) -> None:
        await self._read.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
