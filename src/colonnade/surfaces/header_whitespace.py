"""Header values without their surrounding whitespace, as RFC 9110 (section 5.5) defines them.

uvicorn's fast parser (httptools) keeps trailing spaces and tabs in a header value, and the MCP SDK
compares `Mcp-Method` and `Mcp-Name` with the body exactly, so `Mcp-Name: search ` was refused as
a header mismatch (the conformance suite's `http-header-validation` scenario caught it). This ASGI
middleware trims every value once, before anything reads the headers.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["StripHeaderWhitespace"]

_OWS = b" \t"


class StripHeaderWhitespace:
    """Wraps an ASGI app; HTTP requests reach it with optional whitespace trimmed from header values."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and any(_padded(value) for _, value in scope["headers"]):
            scope = {**scope, "headers": [(name, value.strip(_OWS)) for name, value in scope["headers"]]}
        await self.app(scope, receive, send)


def _padded(value: bytes) -> bool:
    return value[:1] in (b" ", b"\t") or value[-1:] in (b" ", b"\t")
