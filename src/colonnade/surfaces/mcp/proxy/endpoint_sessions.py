"""Which requests of a per-server endpoint's sessions are answered over SSE, and which with one JSON body.

A handshake-era session of `/servers/{name}/mcp` answers over SSE with an event store, so that
whatever the downstream server sends during a request reaches the client on that request's stream:
progress, log messages, its questions (sampling, elicitation, roots), and a stream close it can
resume. That costs the gateway about a millisecond of CPU per request over one JSON body. A request
on which none of that can happen is answered with one JSON body instead: it names no progress
token, its client declared none of sampling, elicitation or roots at `initialize` (so it cannot be
asked), and the server's session for such clients is up and declares no logging. Anything unknown
keeps SSE.

A 2026-07-28 request (no session) is answered as on `/mcp`: with one JSON body (all the era can
carry back during a request without a progress token or a log level is the answer; an input round
is an answer too), over SSE when it names a progress token or a log level, a tool call watched for
its caller leaving; a plain `tools/call` is served by `plain_call.py`. The `initialize` that opens
a session gets one JSON body as well.

The choice is made per request (`request_streams.py`), so concurrent requests of one session never
see each other's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from starlette.datastructures import Headers
from starlette.types import Scope

from colonnade.surfaces.edge import request_body
from colonnade.surfaces.mcp.session_records import SessionRecord
from colonnade.surfaces.mcp.sessions import BoundedSessionManager

__all__ = ["EndpointSessions", "asks_nothing", "quiet_request"]

_ASKING = ("sampling", "elicitation", "roots")


class EndpointSessions(BoundedSessionManager):
    """The bounded session manager of one per-server endpoint, with JSON bodies for quiet requests.

    `server_is_quiet()` says whether the server's session for handshake-era clients is up and
    declares no logging (read per request: the session comes and goes).
    """

    def __init__(self, *args: Any, server_is_quiet: Callable[[], bool], **options: Any) -> None:
        super().__init__(*args, **options)
        self.server_is_quiet = server_is_quiet
        self._unaskable: set[str] = set()

    def opened(self, session_id: str, scope: Scope) -> None:
        if asks_nothing(_body(scope)):
            self._unaskable.add(session_id)

    def restored(self, session_id: str, record: SessionRecord) -> None:
        if asks_nothing({"method": "initialize", "params": record.client}):
            self._unaskable.add(session_id)

    def _answer_as(self, scope: Scope) -> tuple[bool | None, bool]:
        """A request of a session: JSON when it is quiet, else the session's SSE. Any other request (a
        2026-07-28 one, an `initialize`) as on `/mcp`: one JSON body unless it asks for a stream."""
        session_id = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            return super()._answer_as(scope)
        quiet = (
            session_id in self._unaskable
            and scope.get("method") == "POST"
            and quiet_request(_body(scope))
            and self.server_is_quiet()
        )
        return (True if quiet else None), False

    def _ended(self, session_id: str) -> None:
        self._unaskable.discard(session_id)
        super()._ended(session_id)


def asks_nothing(message: Any) -> bool:
    """Whether an `initialize` declares none of the capabilities a server could ask the client by."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return False
    params = message.get("params")
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    if not isinstance(capabilities, dict):
        return False
    return all(capabilities.get(name) is None for name in _ASKING)


def quiet_request(message: Any) -> bool:
    """Whether a message is one request (not `initialize`) that asks for no progress."""
    if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
        return False
    if message["method"] == "initialize":
        return False
    params = message.get("params")
    if params is None:
        return True
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return meta is None or (isinstance(meta, dict) and "progressToken" not in meta)


def _body(scope: Scope) -> Any:
    """The JSON body the edge checked (None when there is none or it is not JSON)."""
    body = request_body(scope)
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None
