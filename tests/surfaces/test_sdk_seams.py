"""Every private member of the `mcp` SDK the gateway still reaches, checked in one place.

`docs/sdk-seams.md` lists each seam, why it is there and the public hook that would remove it. An
SDK upgrade that moves one of them fails here, with the seam's name and the module of ours that
depends on it, before it fails somewhere far away (a session that never ends, a header never sent).
The public attributes whose per-request reading the gateway relies on are checked too: they are
not private, but an SDK that read them once would silently undo what the gateway does with them.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from colonnade.adapters.mcp.direct_post import NEWEST
from colonnade.surfaces.mcp.announcer import connection_of

TESTED_SERIES = "2.3."


def seam(holds: bool, member: str, ours: str) -> None:
    assert holds, (
        f"mcp {version('mcp')}: {member} is gone or changed; {ours} depends on it "
        f"(see docs/sdk-seams.md for what it does and what would replace it)"
    )


def test_the_installed_sdk_is_the_minor_series_the_seams_were_checked_against() -> None:
    assert version("mcp").startswith(TESTED_SERIES), (
        f"mcp {version('mcp')} is installed; the seams were checked against {TESTED_SERIES}x: run this "
        "file, fix what it names, then move the pin in pyproject.toml and TESTED_SERIES together"
    )


# -- server side: surfaces/mcp/ ---------------------------------------------------------------------


def test_the_session_manager_serves_an_opening_request_it_did_not_admit() -> None:
    serve = getattr(StreamableHTTPSessionManager, "_serve_opening_request", None)
    params = list(inspect.signature(serve).parameters) if serve is not None else []
    expected = ["self", "http_transport", "scope", "receive", "send"]
    seam(
        inspect.iscoroutinefunction(serve) and params == expected,
        "StreamableHTTPSessionManager._serve_opening_request(http_transport, scope, receive, send)",
        "surfaces/mcp/sessions.py (BoundedSessionManager._open)",
    )


def test_the_session_manager_keeps_its_sessions_and_their_owners_in_two_dicts() -> None:
    manager = StreamableHTTPSessionManager(Server("seams"))
    for member in ("_server_instances", "_session_owners"):
        seam(
            isinstance(getattr(manager, member, None), dict),
            f"StreamableHTTPSessionManager.{member} (a dict by session id)",
            "surfaces/mcp/sessions.py (BoundedSessionManager._new_session, _close)",
        )
    # Both are what the SDK's own admission writes and its stateful path reads.
    admit = inspect.getsource(StreamableHTTPSessionManager._admit_session)
    stateful = inspect.getsource(StreamableHTTPSessionManager._handle_stateful_request)
    seam(
        "self._server_instances[session_id]" in admit and "self._session_owners[session_id]" in admit,
        "StreamableHTTPSessionManager._admit_session's registration",
        "surfaces/mcp/sessions.py (BoundedSessionManager._new_session mirrors it)",
    )
    seam(
        "self._server_instances" in stateful and "self._session_owners.get" in stateful,
        "StreamableHTTPSessionManager._handle_stateful_request's session lookup",
        "surfaces/mcp/sessions.py (BoundedSessionManager._new_session registers there)",
    )


async def test_a_server_session_speaks_for_its_connection() -> None:
    seen: dict[str, Any] = {}

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        seen["connection"] = connection_of(ctx.session)
        seen["session"] = ctx.session
        return types.CallToolResult(content=[])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])

    server = Server("seams", on_call_tool=call_tool, on_list_tools=list_tools)
    with anyio.fail_after(10):
        async with Client(server, mode="legacy") as client:
            await client.call_tool("t", {})
    seam(
        isinstance(seen.get("connection"), Connection) and seen["connection"] is not seen["session"],
        "ServerSession._connection (the Connection a per-request session speaks for)",
        "surfaces/mcp/announcer.py (connection_of: the announcer, routing sessions, log levels)",
    )


def test_a_session_is_still_driven_as_the_rebuilt_one_mirrors() -> None:
    """`BoundedSessionManager._serve_restored` builds what `serve_loop` builds, with the connection
    initialized from a session record: the recipe and the runner's init gate must not have moved."""
    from mcp.server import runner

    loop = inspect.getsource(runner.serve_loop)
    seam(
        "JSONRPCDispatcher(" in loop
        and 'inline_methods=frozenset({"initialize"})' in loop
        and "Connection.for_loop(dispatcher, session_id=session_id)" in loop
        and "serve_connection(" in loop,
        "mcp.server.runner.serve_loop's dispatcher and connection",
        "surfaces/mcp/sessions.py (BoundedSessionManager._serve_restored mirrors them)",
    )
    seam(
        "self.connection.initialize_accepted" in inspect.getsource(runner.ServerRunner),
        "ServerRunner's init gate on Connection.initialize_accepted",
        "surfaces/mcp/sessions.py (a rebuilt session's connection is initialized through it)",
    )
    opening = inspect.getsource(StreamableHTTPSessionManager._serve_opening_request)
    seam(
        "http_transport.connect()" in opening and "http_transport.idle_scope" in opening,
        "StreamableHTTPSessionManager._serve_opening_request's server task (connect, idle scope)",
        "surfaces/mcp/sessions.py (BoundedSessionManager._serve_restored mirrors it)",
    )


def test_the_sdk_span_middleware_is_a_class_of_its_private_otel_module() -> None:
    try:
        from mcp.server._otel import OpenTelemetryMiddleware
    except ImportError:
        OpenTelemetryMiddleware = None  # type: ignore[assignment,misc]
    seam(
        OpenTelemetryMiddleware is not None
        and any(isinstance(layer, OpenTelemetryMiddleware) for layer in Server("seams").middleware),
        "mcp.server._otel.OpenTelemetryMiddleware (in every Server's middleware)",
        "surfaces/mcp/sdk_spans.py (drop_idle_sdk_spans)",
    )


def test_the_public_attributes_the_gateway_turns_per_request_are_read_per_request() -> None:
    post = inspect.getsource(StreamableHTTPServerTransport._handle_post_request)
    seam(
        "self.is_json_response_enabled" in post,
        "StreamableHTTPServerTransport.is_json_response_enabled, read for each POST",
        "surfaces/mcp/request_streams.py (PerRequestTransport)",
    )
    handle = inspect.getsource(StreamableHTTPSessionManager._handle_request)
    seam(
        "self.json_response" in handle,
        "StreamableHTTPSessionManager.json_response, read for each 2026-07-28 request",
        "surfaces/mcp/sessions.py (BoundedSessionManager.json_response)",
    )
    seam(
        "session_manager.asgi_app" in inspect.getsource(StreamableHTTPASGIApp.__call__),
        "StreamableHTTPASGIApp calling session_manager.asgi_app",
        "surfaces/mcp/sessions.py (BoundedSessionManager._route)",
    )
    seam(
        "transport.terminate()" in inspect.getsource(StreamableHTTPSessionManager._discard_session),
        "StreamableHTTPSessionManager._discard_session terminating the transport",
        "surfaces/mcp/request_streams.py (PerRequestTransport.terminate: how a session's end is heard)",
    )
    seam(
        "self.app.lifespan(self.app)" in inspect.getsource(StreamableHTTPSessionManager.run),
        "StreamableHTTPSessionManager.run entering Server.lifespan",
        "surfaces/mcp/sessions.py (BoundedSessionManager._seeing_lifespan)",
    )


# -- client side: adapters/mcp/ ---------------------------------------------------------------------


def test_the_client_session_derives_a_calls_param_headers() -> None:
    resolve = getattr(ClientSession, "_resolve_param_headers", None)
    params = list(inspect.signature(resolve).parameters) if resolve is not None else []
    seam(
        callable(resolve) and params == ["self", "name", "arguments"],
        "ClientSession._resolve_param_headers(name, arguments)",
        "adapters/mcp/direct_post.py (param_headers)",
    )


def test_the_direct_post_version_needs_no_trim_of_later_revisions() -> None:
    from mcp.client import session

    later = getattr(session, "_later_revision_fields", None)
    seam(
        later is not None and later("tools/call", NEWEST) == frozenset(),
        "mcp.client.session._later_revision_fields: nothing to trim at the newest version",
        "adapters/mcp/direct_post.py (_checked does not trim)",
    )
    assert KNOWN_PROTOCOL_VERSIONS[-1] == NEWEST and NEWEST in MODERN_PROTOCOL_VERSIONS


@pytest.mark.parametrize("method", ["_handle_request", "_handle_stateful_request", "_admit_session"])
def test_the_session_manager_overrides_no_private_method(method: str) -> None:
    from colonnade.surfaces.mcp.proxy.endpoint_sessions import EndpointSessions
    from colonnade.surfaces.mcp.sessions import BoundedSessionManager

    for manager in (BoundedSessionManager, EndpointSessions):
        assert getattr(manager, method) is getattr(StreamableHTTPSessionManager, method), (
            f"{manager.__name__} overrides {method}: a new SDK seam; list it in docs/sdk-seams.md first"
        )
