"""How the gateway reaches one downstream MCP server: its transport, and the session's dispatcher seam.

The `mcp` SDK's `ClientSession` stamps every request of the 2026-07-28 era with the session's own
client capabilities. A proxied call must instead carry the capabilities of the client it speaks for
(a server may refuse a tool, or pick which questions to ask, by them), so the session runs over a
`RelayDispatcher`: a thin wrapper of the SDK's JSON-RPC dispatcher that swaps in the capabilities a
request names under `OVERRIDE_CAPABILITIES` (in its `_meta`, removed before sending) and tells its
owner when the connection ends. Everything else is the SDK's.

Over HTTP, a handshake-era server may close a request's SSE stream before it answers (SEP-1699
polling); the SDK's client then resumes it with `GET` and `Last-Event-ID`. The HTTP client watches
for those resumptions (`on_resume`), so a call relayed for a handshake-era client can close that
client's stream too, exactly as the server did. The SDK sends no `notifications/cancelled` for a
request it may resume; the gateway never resumes an abandoned call, so `RelayDispatcher` sends it
for such a request itself (under an id of its own, to know which).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import CallOptions, OnNotify, OnNotifyIntercept, OnRequest
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, REQUEST_TIMEOUT

from colonnade.adapters.mcp.direct_post import DirectCalls
from colonnade.adapters.mcp.http_transport import AiohttpTransport
from colonnade.adapters.mcp.stdio_stderr import StderrTail
from colonnade.adapters.sandbox.wrap import SandboxRefused, confined
from colonnade.adapters.secrets import SecretResolver
from colonnade.adapters.stdio_command import missing_command
from colonnade.config import McpServerSettings, UpstreamAuth

__all__ = [
    "OVERRIDE_CAPABILITIES",
    "Connection",
    "RelayDispatcher",
    "ResumeListener",
    "UpstreamMisconfigured",
    "UpstreamUnconfigured",
    "negotiate",
    "open_transport",
]

OVERRIDE_CAPABILITIES = "colonnade/relay-client-capabilities"
"""Request `_meta` key: the capabilities of the client a call is relayed for (never sent upstream)."""

ResumeListener = Callable[[str], Awaitable[None]]
"""Told the `Last-Event-ID` of each stream the SDK's client resumes."""

_CONNECT_TIMEOUT_S = 30.0
_SSE_READ_TIMEOUT_S = 300.0
_ABANDON_WRITE_S = 2.0


@dataclass(frozen=True, slots=True)
class Connection:
    """The read and write streams of one connection; over HTTP, also its direct `tools/call` path."""

    read: Any
    write: Any
    direct: DirectCalls | None = None


class UpstreamUnconfigured(Exception):
    """The server cannot start as configured (a secret or its command is missing); the message says which."""


class UpstreamMisconfigured(UpstreamUnconfigured):
    """Its definition cannot work on this host (command missing or not executable, working directory
    absent, sandbox settings that cannot be enforced): restarting will not help until it is fixed."""


class RelayDispatcher:
    """The SDK's `JSONRPCDispatcher`, plus per-request client capabilities and an end-of-connection hook."""

    def __init__(self, inner: JSONRPCDispatcher, on_closed: Callable[[], None]) -> None:
        self._inner = inner
        self._on_closed = on_closed
        self._resumable = itertools.count(1)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if opts is None or opts.get("on_resumption_token") is None or "request_id" in opts:
            return await self._inner.send_raw_request(method, _with_override(params), opts)
        request_id = f"colonnade-resumable-{next(self._resumable)}"  # never an integer: never reused
        try:
            return await self._inner.send_raw_request(
                method, _with_override(params), {**opts, "request_id": request_id}
            )
        except anyio.get_cancelled_exc_class():
            await self.cancel(request_id, "caller cancelled")
            raise
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                await self.cancel(request_id, "timed out")
            raise

    async def cancel(self, request_id: str, reason: str) -> None:
        """Tell the server an abandoned resumable request is over (shielded, bounded like the SDK's own)."""
        with anyio.move_on_after(_ABANDON_WRITE_S, shield=True):
            await self._inner.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        await self._inner.notify(method, params, opts)

    async def run(
        self,
        on_request: OnRequest,
        on_notify: OnNotify,
        on_notify_intercept: OnNotifyIntercept | None = None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            await self._inner.run(on_request, on_notify, on_notify_intercept, task_status=task_status)
        finally:
            self._on_closed()


def _with_override(params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """Put the relayed capabilities in the 2026 reserved key; a handshake-era request just loses them."""
    meta = params.get("_meta") if params is not None else None
    if not isinstance(meta, Mapping) or OVERRIDE_CAPABILITIES not in meta:
        return params
    assert params is not None
    rest = {key: value for key, value in meta.items() if key != OVERRIDE_CAPABILITIES}
    if PROTOCOL_VERSION_META_KEY in rest:
        rest[CLIENT_CAPABILITIES_META_KEY] = meta[OVERRIDE_CAPABILITIES]
    return {**params, "_meta": rest}


class _ResumeWatch(httpx2.AsyncBaseTransport):
    """The HTTP transport, plus a look at each resumption (`GET` with `Last-Event-ID`) on its way out."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, on_resume: ResumeListener) -> None:
        self._inner = inner
        self._on_resume = on_resume

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        resumed = request.headers.get("last-event-id")
        if request.method == "GET" and resumed:
            await self._on_resume(resumed)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def negotiate(session: ClientSession, protocol: str) -> None:
    """The 2026-07-28 era when the server offers it (`server/discover`), else the handshake era."""
    if protocol == "legacy":
        await session.initialize()
        return
    try:
        await session.discover()
    except (MCPError, RuntimeError):  # not a modern server, or no modern version in common
        await session.initialize()


@contextlib.asynccontextmanager
async def open_transport(
    server: McpServerSettings,
    secrets: SecretResolver,
    *,
    on_resume: ResumeListener | None = None,
    client_info: dict[str, Any] | None = None,
    on_connection_lost: Callable[[], None] = lambda: None,
    on_session_gone: Callable[[], None] = lambda: None,
    stderr: StderrTail | None = None,
    hidden: tuple[Path, ...] = (),
) -> AsyncIterator[Connection]:
    """One connection: a child process, or one pooled HTTP client (and its direct calls, which
    announce themselves as `client_info` and report a failed connection to `on_connection_lost`);
    over HTTP, `on_session_gone` hears that the server answered a request of the session 404; a
    child process's stderr goes through `stderr` when given, else straight to the gateway's; a child
    process is confined by its `sandbox` settings and never sees the `hidden` paths (the data directory)."""
    if server.transport == "stdio":
        assert server.command is not None
        missing = missing_command(server)  # said plainly, not as the spawn's bare FileNotFoundError
        if missing is not None:
            raise UpstreamMisconfigured(missing)
        env = dict(server.env)
        for variable, secret in server.secret_env.items():
            env[variable] = await _secret(
                secrets, secret, f"{server.name}.secret_env.{variable}", server.tenant
            )
        plain = StdioServerParameters(
            command=server.command, args=list(server.args), env=env or None, cwd=_cwd(server.cwd)
        )
        async with contextlib.AsyncExitStack() as sandbox:
            try:
                params, _ = await sandbox.enter_async_context(confined(server, plain, hidden=hidden))
            except SandboxRefused as exc:
                raise UpstreamMisconfigured(str(exc)) from None
            if stderr is None:
                async with stdio_client(params) as (read, write):  # the server's stderr goes to the gateway's
                    yield Connection(read, write)
                return
            async with stderr.capture() as errlog, stdio_client(params, errlog=errlog) as (read, write):
                stderr.spawned(errlog)
                yield Connection(read, write)
        return
    assert server.url is not None
    headers = dict(server.headers)
    if isinstance(server.auth, UpstreamAuth):  # the other modes send the caller's credential per call
        value = await _secret(secrets, server.auth.secret, f"{server.name}.auth.secret", server.tenant)
        if server.auth.type == "bearer":
            headers["authorization"] = f"Bearer {value}"
        else:
            assert server.auth.header is not None
            headers[server.auth.header] = value
    timeout = httpx2.Timeout(_CONNECT_TIMEOUT_S, read=_SSE_READ_TIMEOUT_S)
    # One client (and TLS context) per connection, shared by every call on it; never proxies from
    # the environment, like the contract adapter.
    pool = AiohttpTransport(on_session_gone)
    transport: httpx2.AsyncBaseTransport = pool if on_resume is None else _ResumeWatch(pool, on_resume)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout, transport=transport, trust_env=False) as client,
        streamable_http_client(server.url, http_client=client) as (read, write),
    ):
        direct = DirectCalls(
            server.url,
            dict(client.headers),
            pool.pool,
            client_info=client_info or {},
            on_connection_lost=on_connection_lost,
        )
        yield Connection(read, write, direct)


async def _secret(secrets: SecretResolver, name: str, where: str, tenant: str) -> str:
    """The value of a secret the server's definition names, in the server's tenant's scope."""
    value = await secrets.resolve(name, tenant=tenant)
    if value is None:
        raise UpstreamUnconfigured(
            f"{where} names the secret {name!r}, which is not set: {secrets.how_to_set(name, tenant=tenant)}"
        )
    return value


def _cwd(cwd: Path | None) -> str | None:
    return os.fspath(cwd) if cwd is not None else None
