"""One downstream MCP server: one long-lived session, kept alive, shared by every call.

A supervisor task owns the connection (a child process or one pooled HTTP client) and its SDK
`ClientSession`; calls from any task are multiplexed on it. When the connection ends unexpectedly
(the process crashed, the HTTP transport failed), the server is `down` and restarted with an
exponential backoff; calls meanwhile fail fast (`UpstreamDown`). A `lazy` server lists its tools once
at start-up, then connects on the first call and disconnects after `idle_timeout_s`. Tool lists are
kept current from the server's list-change notices (both eras) and an optional periodic refresh.

What a call exchanges with the caller's own connection (progress, logs, questions, input rounds)
goes through the `Relay` the call runs under; what the server sends that no call is tied to is
routed by the session's `InFlight` calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.subscriptions import ServerEvent, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry.trace import Span, StatusCode, Tracer

from colonnade import __version__
from colonnade.adapters.credentials.grant import CredentialRefused
from colonnade.adapters.mcp.direct_post import DirectCalls, param_headers
from colonnade.adapters.mcp.discovery import event_of, list_tools, listen_for_changes, listen_for_updates
from colonnade.adapters.mcp.exchange import Build, First, exchange
from colonnade.adapters.mcp.in_flight import InFlight
from colonnade.adapters.mcp.stdio_stderr import StderrTail
from colonnade.adapters.mcp.wire import RelayDispatcher, UpstreamMisconfigured, negotiate, open_transport
from colonnade.adapters.outcome import COMMAND_UNADMITTED, MISCONFIGURED
from colonnade.adapters.sandbox.confinement import plan
from colonnade.adapters.secrets import EnvSecretResolver, SecretResolver
from colonnade.catalog.mcp_projection import unmatched_settings
from colonnade.config import McpServerSettings
from colonnade.mcp_relay.answer import UpstreamDown, UpstreamHeld
from colonnade.mcp_relay.relay import Relay
from colonnade.observability.tracing import trace_meta

__all__ = ["CommandGate", "CommandUnadmitted", "Upstream", "UpstreamState", "UpstreamStatus"]

logger = logging.getLogger("colonnade.servers")

_CLIENT_INFO = types.Implementation(name="colonnade", version=__version__)
_STOP_WAIT_S = 10.0
"""How long `stop` waits for the session's task to end after cancelling it."""
_FOLLOW_AGAIN_S = 1.0
"""How soon a resource subscription of the 2026-07-28 era is opened again after it ended."""
_MISCONFIGURED = MISCONFIGURED
ToolsListener = Callable[["Upstream", tuple[types.Tool, ...]], None]
EventListener = Callable[["Upstream", ServerEvent], Awaitable[None]]
ConnectionListener = Callable[[str, bool, dict[str, Any]], None]
"""(server name, up, details): `protocol_version` when up, `reason` (idle, restart, failed) when down."""
CommandGate = Callable[[McpServerSettings], Awaitable[str | None]]
"""Asked before each start of a stdio server: why its command must not start (it changed since it was
admitted, `runtime/command_admission.py`), or None."""


class CommandUnadmitted(Exception):
    """The command's files differ from the admitted ones: the server waits for a re-admission."""


class UpstreamState(StrEnum):
    IDLE = "idle"
    """Lazy and not connected: the next call connects."""
    CONNECTING = "connecting"
    READY = "ready"
    DOWN = "down"
    """The connection ended or failed; a restart is scheduled."""
    MISCONFIGURED = "misconfigured"
    """Its definition cannot work here (command, working directory, sandbox): no restart until fixed."""
    UNADMITTED = "unadmitted"
    """Its command changed on disk since it was admitted: no start until the change is admitted."""
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class UpstreamStatus:
    name: str
    tenant: str
    transport: str
    state: str
    healthy: bool
    since: float
    restarts: int
    tools: int
    calls: int
    errors: int
    in_flight: int
    protocol_version: str | None
    server_name: str | None
    server_version: str | None
    last_error: str | None
    warnings: list[str]
    """Settings that name no tool of the server (a misspelt `tools.<name>`, `allow_tools`, ...)."""
    violations: dict[str, int]
    """How often its sandbox ended its process, by kind (memory, cpu, pids, signal, setup)."""
    sandbox: dict[str, Any]
    """The confinement of a stdio server on this host: what is applied and what is missing."""

    def to_json(self) -> dict[str, Any]:
        return {field: getattr(self, field) for field in self.__slots__}


class Upstream:
    """Build it, `start()` it inside the event loop that will use it, `stop()` it when done."""

    def __init__(
        self,
        settings: McpServerSettings,
        *,
        secrets: SecretResolver | None = None,
        tracer: Tracer | None = None,
        on_tools: ToolsListener | None = None,
        on_event: EventListener | None = None,
        on_demand: bool = False,
        on_connection: ConnectionListener | None = None,
        hidden: tuple[Path, ...] = (),
        command_gate: CommandGate | None = None,
    ) -> None:
        self.settings = settings
        self.command_gate = command_gate
        self.on_demand = on_demand
        """Connect only when a call needs it (no start-up listing): a handshake-era twin session."""
        self.name = settings.name
        self.secrets: SecretResolver = secrets if secrets is not None else EnvSecretResolver()
        self.tracer = tracer
        self.on_tools = on_tools
        self.on_event = on_event
        self.on_connection = on_connection
        self.hidden = hidden
        """Paths of the gateway its sandbox never shows (the data directory)."""
        """Told when the session comes up or goes away (the gateway's trace events)."""
        self.tools: tuple[types.Tool, ...] = ()
        self.server_info: types.Implementation | None = None
        """Who the server says it is (from its last handshake)."""
        self.negotiated: str | None = None
        """The protocol version of the last session."""
        self.state = UpstreamState.STOPPED
        self.since = time.time()
        self.restarts = 0
        self.calls = 0
        self.errors = 0
        self.last_error: str | None = None
        self.warnings: tuple[str, ...] = ()
        self.violations: dict[str, int] = {}
        self.confinement = plan(settings, hidden=hidden) if settings.transport == "stdio" else None
        """What its sandbox applies on this host (as `colonnade servers check` reports it)."""
        self.stderr = StderrTail(self.name) if settings.transport == "stdio" else None
        """A stdio server's stderr: tagged on the way to the gateway's, its last lines in `last_error`."""
        self._session: ClientSession | None = None
        self._direct: DirectCalls | None = None
        self._closed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._demand = asyncio.Event()
        self._wake = asyncio.Event()
        self._relist = asyncio.Event()
        self._restart_requested = False
        self._crashed = False
        self.in_flight = InFlight()
        self._last_used = time.monotonic()

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._set_state(UpstreamState.CONNECTING)
            self._task = asyncio.create_task(self._supervise(), name=f"colonnade-mcp-{self.name}")

    async def stop(self) -> None:
        """Stop the session's task; a task whose clean-up does not end within `_STOP_WAIT_S` (a
        transport closing a stream the server keeps open) is left to finish on its own."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=_STOP_WAIT_S)
            if not done:
                logger.warning(
                    "server %s: its session did not close within %.0f s; left closing",
                    self.name,
                    _STOP_WAIT_S,
                )
            elif not task.cancelled() and task.exception() is not None:
                logger.debug("server %s: its session ended with %r", self.name, task.exception())
        self._session = None
        self._set_state(UpstreamState.STOPPED)
        _event("mcp.server.stopped", self.name)

    def restart(self) -> None:
        """Reconnect now: close a live session, or cut a pending backoff short."""
        self._restart_requested = True
        self._crashed = False
        self._demand.set()
        self._wake.set()
        if self._task is None or self._task.done():
            self.start()

    def _session_gone(self) -> None:
        """The server answered 404 to a request of the session: it no longer knows it. The spec says a
        client MUST open a new session; the request that heard it has failed already."""
        if not self._restart_requested:
            self.last_error = "the server no longer knows the session (HTTP 404): opening a new one"
            _event("mcp.server.session_gone", self.name, level=logging.WARNING)
            self.restart()

    def status(self) -> UpstreamStatus:
        info = self.server_info
        return UpstreamStatus(
            name=self.name,
            tenant=self.settings.tenant,
            transport=self.settings.transport,
            state=self.state.value,
            healthy=self.state in (UpstreamState.READY, UpstreamState.IDLE),
            since=self.since,
            restarts=self.restarts,
            tools=len(self.tools),
            calls=self.calls,
            errors=self.errors,
            in_flight=len(self.in_flight),
            protocol_version=self.negotiated,
            server_name=info.name if info is not None else None,
            server_version=info.version if info is not None else None,
            last_error=self.last_error,
            warnings=list(self.warnings),
            violations=dict(self.violations),
            sandbox=self.confinement.to_json() if self.confinement is not None else {},
        )

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version if self._session is not None else None

    @property
    def server_capabilities(self) -> types.ServerCapabilities | None:
        return self._session.server_capabilities if self._session is not None else None

    # -- calls ---------------------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        relay: Relay,
        timeout_s: float,
        credential: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The server's answer to one tools/call (input rounds the caller can be asked are played out).

        `credential` is the caller's own header (forward or exchange mode): it rides on a direct
        2026-07-28 POST only, since the SDK's session sends every call with the same headers; a
        call that cannot go direct is refused (`CredentialRefused`) rather than sent without it.
        """

        def request(responses: types.InputResponses | None, state: str | None, meta: dict[str, Any]) -> Any:
            return types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name=name, arguments=arguments, input_responses=responses, request_state=state, _meta=meta
                )
            )

        return await self.exchange(
            request,
            relay=relay,
            timeout_s=timeout_s,
            counted=True,
            tool=(name, arguments),
            credential=credential,
        )

    async def exchange(
        self,
        build: Build,
        *,
        relay: Relay,
        timeout_s: float,
        counted: bool = False,
        tool: tuple[str, dict[str, Any]] | None = None,
        credential: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Send one request built by `build(input_responses, request_state, _meta)`; the raw answer.

        Its `_meta` carries the current span (W3C `traceparent`/`tracestate`), when there is one.

        A `tools/call` names its `tool` (name, arguments): a call that needs nothing of the SDK's
        session is POSTed directly (`direct_post.py`). Raises `UpstreamDown`, `MCPError` (the
        server's error, a timeout, a lost connection) or pydantic's `ValidationError` (an answer
        that is not a valid result).
        """
        deadline = time.monotonic() + timeout_s
        session = await self._live_session(timeout_s)
        if counted:
            self.calls += 1
        with self.in_flight.call(relay):
            return await self._exchange(session, build, relay, deadline, counted, tool, credential)

    async def _exchange(
        self,
        session: ClientSession,
        build: Build,
        relay: Relay,
        deadline: float,
        counted: bool,
        tool: tuple[str, dict[str, Any]] | None,
        credential: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        version = session.protocol_version
        modern = version in MODERN_PROTOCOL_VERSIONS
        # Handshake-era HTTP streams may be closed before the answer and resumed: a caller whose
        # own stream can be closed hears of it (then the SDK sends no cancellation on abandon).
        follows = self.settings.transport == "http" and not modern and relay.follows_stream_closes
        metadata = self.in_flight.resumption(relay) if follows else None
        direct = self._direct
        traced = trace_meta()  # the current span, for the server: None when no span is recorded
        first: First | None = None
        if tool is not None and direct is not None and version is not None and direct.takes(relay, version):
            name, arguments = tool
            headers = param_headers(session, name, arguments) | dict(credential or {})
            first = functools.partial(direct.call_tool, name, arguments, relay, version, headers, traced)
        elif credential is not None:
            raise CredentialRefused(
                _MISCONFIGURED,
                f"server {self.name!r} gets each caller's own credential, which only a stateless "
                "2026-07-28 call without progress or log messages can carry; this call cannot be sent",
            )
        try:
            answer = await exchange(
                session, build, relay, deadline, metadata=metadata, first=first, trace=traced
            )
        except MCPError as exc:
            if counted:
                self.errors += 1
            if exc.code == types.CONNECTION_CLOSED:
                self.last_error = f"the connection closed during a request: {exc.error.message}"
            raise
        except BaseException:
            if counted:
                self.errors += 1
            raise
        finally:
            self._last_used = time.monotonic()
        if counted and answer.get("isError") is True:
            self.errors += 1
        return answer

    async def _live_session(self, timeout_s: float) -> ClientSession:
        """The ready session; waits for one only while it is coming up for the first time or on demand."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.state is UpstreamState.READY and self._session is not None:
                return self._session
            if (refused := self.unavailable()) is not None:
                raise refused
            if self.state is UpstreamState.IDLE:
                self._demand.set()
                self._wake.set()
            changed = self._changed
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"server {self.name!r} did not become ready within {timeout_s:.1f}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    def unavailable(self) -> UpstreamDown | None:
        """Why a request would be refused now, without waiting (held, stopped, or down after a crash:
        `UpstreamHeld` carries the typed code); None while it is ready or coming up."""
        if self.state is UpstreamState.READY and self._session is not None:
            return None
        if self.state in _HELD:
            return UpstreamHeld(_HELD[self.state], self._why_down())
        if self.state is UpstreamState.STOPPED or self.state is UpstreamState.DOWN or self._crashed:
            return UpstreamDown(self._why_down())
        return None

    async def killed_by_sandbox(self, wait_s: float = 0.5) -> str | None:
        """Why its sandbox killed the process a call was on (memory, CPU time, processes), or None."""
        if self.stderr is None:
            return None
        violation = await self.stderr.violation_after_exit(wait_s)
        if violation is None or violation.get("violation") not in ("memory", "cpu", "pids", "signal"):
            return None
        return str(violation.get("message"))

    def _why_down(self) -> str:
        if self.state is UpstreamState.STOPPED:
            return f"server {self.name!r} is not running"
        since = time.strftime("%H:%M:%S", time.localtime(self.since))
        reason = f": {self.last_error}" if self.last_error else ""
        if self.state in _HELD:
            return (
                f"server {self.name!r} is {self.state.value} since {since}, not restarted until that is "
                f"resolved{reason}"
            )
        return f"server {self.name!r} is {self.state.value} since {since}, restarting{reason}"

    # -- the supervisor --------------------------------------------------------------------------

    async def _supervise(self) -> None:
        failures = 0
        listed_once = self.on_demand
        while True:
            if (
                (self.settings.start == "lazy" or self.on_demand)
                and listed_once
                and not self._demand.is_set()
            ):
                self._set_state(UpstreamState.IDLE)
                await self._demand.wait()
            self._restart_requested = False
            self._set_state(UpstreamState.CONNECTING)
            reason = "closed"
            started = time.monotonic()
            said_before = self.last_error  # the same object after the attempt: it said nothing new
            if self.stderr is not None:
                self.stderr.lines.clear()  # a start that fails before the process runs has no last words
            connected = False
            try:
                async with self._connect(failures) as (session, direct):
                    failures, listed_once, self._crashed = 0, True, False
                    self._last_used = time.monotonic()  # a lazy session idles from now on
                    self._session, self._direct = session, direct
                    self._set_state(UpstreamState.READY)
                    _event(
                        "mcp.server.connected",
                        self.name,
                        protocol_version=session.protocol_version,
                        tools=len(self.tools),
                        ms=round((time.monotonic() - started) * 1000, 1),
                    )
                    self._tell_connection(up=True, protocol_version=session.protocol_version)
                    connected = True
                    reason = await self._serve(session)
            except asyncio.CancelledError:
                raise
            except (UpstreamMisconfigured, CommandUnadmitted) as exc:  # retrying cannot help: held
                self._session, self._direct = None, None
                await self._hold(exc)
                continue
            except Exception as exc:  # a failed start or a broken connection: reported, then retried
                self.last_error = _describe(exc)
                reason = "failed"
            finally:
                self._session, self._direct = None, None
            if connected:
                self._tell_connection(up=False, reason=reason)
            elif self._sandbox_setup_failed():  # its stderr is drained by now: the launcher's word is in
                self._explain_exit(said_before)  # counted as a `setup` violation, said in last_error
                await self._hold(UpstreamMisconfigured(self.last_error or "sandbox: setup failed"))
                continue
            if reason == "idle":
                _event("mcp.server.disconnected", self.name, reason="idle")
                self._demand.clear()
                continue
            if reason == "restart":
                self.restarts += 1
                _event("mcp.server.restarted", self.name, reason="requested")
                continue
            failures += 1
            self._crashed = True
            self._explain_exit(said_before)
            self._set_state(UpstreamState.DOWN)
            delay = min(
                self.settings.restart_backoff_s * 2 ** (failures - 1), self.settings.restart_backoff_max_s
            )
            _event(
                "mcp.server.disconnected",
                self.name,
                level=logging.WARNING,
                reason=reason,
                error=self.last_error,
                restart_in_s=round(delay, 2),
            )
            await self._pause(delay)
            self.restarts += 1
            _event("mcp.server.restarting", self.name, attempt=failures)

    async def _hold(self, exc: Exception) -> None:
        """Stay down, without restarts, until a restart is asked (the definition fixed, or re-admitted)."""
        unadmitted = isinstance(exc, CommandUnadmitted)
        state = UpstreamState.UNADMITTED if unadmitted else UpstreamState.MISCONFIGURED
        self.last_error = str(exc)
        self._crashed = True
        self._set_state(state)
        _event(f"mcp.server.{state.value}", self.name, level=logging.ERROR, error=self.last_error)
        while not self._restart_requested:
            self._wake.clear()
            await self._wake.wait()
        self.restarts += 1
        _event("mcp.server.restarting", self.name, after=state.value)

    def _sandbox_setup_failed(self) -> bool:
        """The sandbox could not be set up for a process that never connected (a path it cannot show,
        a setting the kernel refuses): the same settings would fail again."""
        violation = self.stderr.violation if self.stderr is not None else None
        return violation is not None and violation.get("violation") == "setup"

    def _explain_exit(self, said_before: str | None) -> None:
        """A stdio server's process ended: say so, with its last words on stderr (often the why)."""
        if self.stderr is None:
            return
        violation = self.stderr.violation
        if violation is not None:
            kind = str(violation.get("violation"))
            self.violations[kind] = self.violations.get(kind, 0) + 1
            self.last_error = f"sandbox: {violation.get('message')}"
            _event("mcp.server.sandbox_violation", self.name, level=logging.WARNING, kind=kind)
            return
        error = self.last_error
        if error is None or error is said_before or error.startswith("Connection closed"):
            error = "the process exited (or closed its stdout)"
        said = self.stderr.said()
        self.last_error = f"{error}; its last lines on stderr: {said}" if said else error

    @contextlib.asynccontextmanager
    async def _connect(self, attempt: int) -> AsyncIterator[tuple[ClientSession, DirectCalls | None]]:
        """Open the transport and the session, negotiate the era and list the tools (one span)."""
        if self.command_gate is not None and self.settings.transport == "stdio":
            refusal = await self.command_gate(self.settings)
            if refusal is not None:
                raise CommandUnadmitted(refusal)
        closed = asyncio.Event()
        self._closed = closed
        span = self._span("mcp.server.connect", attempt=attempt)
        async with contextlib.AsyncExitStack() as stack:
            try:
                transport = open_transport(
                    self.settings,
                    self.secrets,
                    on_resume=self.in_flight.resumed,
                    client_info=_CLIENT_INFO.model_dump(by_alias=True, mode="json", exclude_none=True),
                    on_connection_lost=closed.set,
                    on_session_gone=self._session_gone,
                    stderr=self.stderr,
                    hidden=self.hidden,
                )
                connection = await stack.enter_async_context(transport)
                inner = JSONRPCDispatcher(
                    connection.read, connection.write, on_stream_exception=self._garbage
                )
                dispatcher = RelayDispatcher(inner, closed.set)
                session = ClientSession(
                    dispatcher=dispatcher,
                    read_timeout_seconds=self.settings.connect_timeout_s,
                    sampling_callback=self.in_flight.sampling,
                    elicitation_callback=self.in_flight.elicitation,
                    list_roots_callback=self.in_flight.roots,
                    logging_callback=self.in_flight.log,
                    message_handler=self._on_message,
                    client_info=_CLIENT_INFO,
                )
                await stack.enter_async_context(session)
                await negotiate(session, self.settings.protocol)
                self.server_info, self.negotiated = session.server_info, session.protocol_version
                await self._list_tools(session)
            except BaseException as exc:
                if span is not None:
                    span.record_exception(exc)
                    span.set_status(StatusCode.ERROR, _describe(exc))
                    span.end()
                raise
            if span is not None:
                span.set_attribute("mcp.protocol_version", session.protocol_version or "")
                span.set_attribute("mcp.tools", len(self.tools))
                span.end()
            yield session, connection.direct

    def _span(self, name: str, **attributes: Any) -> Span | None:
        if self.tracer is None:
            return None
        return self.tracer.start_span(
            name, attributes={"mcp.server": self.name, "mcp.transport": self.settings.transport, **attributes}
        )

    async def _serve(self, session: ClientSession) -> str:
        """Wait until the connection ends, a restart is asked, a lazy server idles, or tools change."""
        listener = asyncio.create_task(
            listen_for_changes(session, self._on_server_event), name=f"colonnade-mcp-{self.name}-listen"
        )
        refresh = self.settings.refresh_s
        next_refresh = time.monotonic() + refresh if refresh else None
        try:
            while True:
                if self._closed.is_set():
                    return "closed"
                if self._restart_requested:
                    return "restart"
                if self._idle():
                    return "idle"
                if self._relist.is_set() or (next_refresh is not None and time.monotonic() >= next_refresh):
                    self._relist.clear()
                    await self._list_tools(session)
                    next_refresh = time.monotonic() + refresh if refresh else None
                await self._nap(next_refresh)
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await listener

    async def _nap(self, next_refresh: float | None) -> None:
        """Sleep until something happens (or a second passes: idle and refresh are checked then)."""
        self._wake.clear()
        waits = [asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(self._closed.wait())]
        timeout = 1.0 if next_refresh is None else max(0.0, min(1.0, next_refresh - time.monotonic()))
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()

    def _idle(self) -> bool:
        if (self.settings.start != "lazy" and not self.on_demand) or len(self.in_flight):
            return False
        return time.monotonic() - self._last_used >= self.settings.idle_timeout_s

    async def _pause(self, delay: float) -> None:
        """The backoff before a restart; a requested restart ends it early."""
        deadline = time.monotonic() + delay
        while not self._restart_requested and (remaining := deadline - time.monotonic()) > 0:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), remaining)

    async def _list_tools(self, session: ClientSession) -> None:
        self.accept_tools(await list_tools(session))

    def accept_tools(self, tools: tuple[types.Tool, ...]) -> None:
        """A complete, current tool list of the server (from discovery or a caller's listing)."""
        if tools == self.tools:
            return
        self.tools = tools
        _event("mcp.server.tools", self.name, tools=len(tools))
        warnings = tuple(unmatched_settings(self.settings, (tool.name for tool in tools)))
        if warnings and warnings != self.warnings:
            for warning in warnings:
                logger.warning("server %s: %s", self.name, warning)
        self.warnings = warnings
        if self.on_tools is not None:
            try:
                self.on_tools(self, tools)
            except Exception as exc:  # a listing the catalog refuses (e.g. a name clash) is reported
                self.last_error = f"the tools of server {self.name!r} were not served: {exc}"
                logger.error(self.last_error)

    async def follow_resource(self, uri: str) -> None:
        """2026-07-28: pass on the server's updates of one resource (as its list changes are) until
        cancelled, listening again on each new session."""
        while True:
            try:
                session = await self._live_session(self.settings.connect_timeout_s)
                await listen_for_updates(session, uri, self._on_server_event)
            except (UpstreamDown, TimeoutError) as exc:
                logger.debug("server %r: cannot follow %s yet: %s", self.name, uri, exc)
            await asyncio.sleep(_FOLLOW_AGAIN_S)  # the stream or its session ended

    async def _on_server_event(self, event: ServerEvent) -> None:
        if isinstance(event, ToolsListChanged):
            self._relist.set()
            self._wake.set()
        if self.on_event is not None:
            await self.on_event(self, event)

    # -- what the server sends on its own ------------------------------------------------------------

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            await self._garbage(message)
            return
        event = event_of(message)
        if event is not None:
            await self._on_server_event(event)

    async def _garbage(self, exc: Exception) -> None:
        self.last_error = f"the server sent something that is not MCP: {_describe(exc)}"
        logger.warning("server %s: %s", self.name, self.last_error)

    def _tell_connection(self, *, up: bool, **details: Any) -> None:
        if self.on_connection is not None:
            try:
                self.on_connection(self.name, up, details)
            except Exception:  # a listener's failure must not stop the supervisor
                logger.exception("server %s: a connection listener failed", self.name)

    def _set_state(self, state: UpstreamState) -> None:
        if state is not self.state:
            self.state = state
            self.since = time.time()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


_HELD = {UpstreamState.MISCONFIGURED: MISCONFIGURED, UpstreamState.UNADMITTED: COMMAND_UNADMITTED}
"""The states a server is held in until someone acts, and the typed outcome its calls get meanwhile."""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (code {exc.error.code})"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if str(exc) else text


def _event(name: str, server: str, *, level: int = logging.INFO, **fields: Any) -> None:
    logger.log(level, "%s %s", name, server, extra={"event": name, "server": server, **fields})
